"""Self-hosted MathJax and Mermaid: fetched once, checked, served from the site.

The usual set-up loads both from a public CDN at read time. Those CDNs are slow or
blocked for many readers in mainland China, and a page whose math depends on a third
party cannot be checked offline. So the build takes each library from its npm
package (`npm pack`, at a pinned version), checks the file against the sha256 written
here, caches it under ~/.cache/thousand-points/vendor (or $THOUSAND_CACHE_DIR/vendor)
and puts it into the site under assets/vendor/.

Without npm (or with THOUSAND_VENDOR=cdn) the pages load the same pinned files from a
CDN instead, with the same sha256 as subresource integrity, and the build says so in
one line.
"""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Asset:
    package: str  # npm package
    version: str
    member: str  # the file inside the package
    sha256: str

    @property
    def site_path(self) -> str:
        name = Path(self.member).name
        return f"assets/vendor/{self.package}-{self.version}/{name}"

    @property
    def cdn_url(self) -> str:
        return (
            f"https://cdn.jsdelivr.net/npm/{self.package}@{self.version}/{self.member}"
        )

    @property
    def integrity(self) -> str:
        digest = base64.b64encode(bytes.fromhex(self.sha256)).decode()
        return f"sha256-{digest}"


ASSETS = {
    # tex-svg: one self-contained file (the CHTML output also needs font files).
    "mathjax": Asset(
        "mathjax",
        "3.2.2",
        "es5/tex-svg.js",
        "d4295dc33744836935c1399feece5159577b34c5c8ffb9f1c6324cd82e03a882",
    ),
    # Material for MkDocs uses Mermaid 11 when it loads it itself.
    "mermaid": Asset(
        "mermaid",
        "11.17.2",
        "dist/mermaid.min.js",
        "581ed7d74bd9048d0e3a91363927d72ef22942d7722546b27f7cc29e35390eb8",
    ),
}


# The whole MathJax package, for rendering TeX to SVG while the site is built
# (src/thousand/site/texsvg.py): the tarball `npm pack mathjax@3.2.2` fetches.
MATHJAX_PACKAGE = ASSETS["mathjax"]
MATHJAX_TARBALL_SHA256 = (
    "1b9c0a1c44df864e915690558e72adb9cc5203360daefd385084ced3b6c64c09"
)


class VendorError(RuntimeError):
    pass


def cache_dir() -> Path:
    base = os.environ.get("THOUSAND_CACHE_DIR")
    root = Path(base) if base else Path.home() / ".cache" / "thousand-points"
    return root / "vendor"


def _cached(asset: Asset) -> Path:
    return cache_dir() / asset.site_path.removeprefix("assets/vendor/")


def _check(asset: Asset, data: bytes, origin: str) -> bytes:
    got = hashlib.sha256(data).hexdigest()
    if got != asset.sha256:
        raise VendorError(
            f"{asset.package}@{asset.version} {asset.member} from {origin} has "
            f"sha256 {got}, expected {asset.sha256}: refusing to serve it"
        )
    return data


def fetch(asset: Asset, npm: str) -> bytes:
    """The file's bytes: from the cache, else from `npm pack` (then cached)."""
    path = _cached(asset)
    if path.exists():
        return _check(asset, path.read_bytes(), str(path))
    with tempfile.TemporaryDirectory() as tmp:
        spec = f"{asset.package}@{asset.version}"
        tarball = _npm_pack(npm, spec, tmp)
        with tarfile.open(tarball) as tar:
            member = tar.extractfile(f"package/{asset.member}")
            if member is None:
                raise VendorError(f"{spec} has no {asset.member}")
            data = _check(asset, member.read(), f"npm pack {spec}")
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".part")
    partial.write_bytes(data)
    partial.replace(path)  # a half-written file never looks cached
    return data


def _npm_pack(npm: str, spec: str, folder: str) -> Path:
    """`npm pack spec` into `folder`; the tarball it wrote."""
    done = subprocess.run(
        [npm, "pack", spec, "--pack-destination", folder, "--silent"],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise VendorError(f"npm pack {spec} failed:\n{done.stderr.strip()}")
    (tarball,) = Path(folder).glob("*.tgz")
    return tarball


def package_dir(npm: str | None = None) -> Path | None:
    """The MathJax package unpacked under the cache (fetched with `npm pack` and
    checked against its tarball's sha256 the first time), or None without npm and
    without a cached copy, or with THOUSAND_VENDOR=cdn."""
    if os.environ.get("THOUSAND_VENDOR", "local") == "cdn":
        return None
    asset = MATHJAX_PACKAGE
    folder = cache_dir() / f"{asset.package}-{asset.version}-package"
    if (folder / "package.json").is_file():
        return folder
    npm = npm or shutil.which("npm")
    if npm is None:
        return None
    spec = f"{asset.package}@{asset.version}"
    with tempfile.TemporaryDirectory() as tmp:
        tarball = _npm_pack(npm, spec, tmp)
        got = hashlib.sha256(tarball.read_bytes()).hexdigest()
        if got != MATHJAX_TARBALL_SHA256:
            raise VendorError(
                f"npm pack {spec} has sha256 {got}, expected "
                f"{MATHJAX_TARBALL_SHA256}: refusing to run it"
            )
        unpacked = Path(tmp) / "unpacked"
        with tarfile.open(tarball) as tar:
            tar.extractall(unpacked, filter="data")
        _check(asset, (unpacked / "package" / asset.member).read_bytes(), spec)
        folder.parent.mkdir(parents=True, exist_ok=True)
        partial = Path(tempfile.mkdtemp(prefix=folder.name + ".", dir=folder.parent))
        partial.rmdir()
        shutil.move(unpacked / "package", partial)  # /tmp may be another disk
        try:
            partial.rename(folder)  # whole or not at all
        except OSError:  # another build unpacked it meanwhile
            shutil.rmtree(partial, ignore_errors=True)
    return folder


def resolve() -> dict[str, tuple[str, bytes | None]]:
    """name -> (where pages load it from, bytes to put into the site or None).

    The local path is relative to the site root; a CDN URL is absolute.
    """
    npm = shutil.which("npm")
    mode = os.environ.get("THOUSAND_VENDOR", "local")
    if mode not in {"local", "cdn"}:
        raise VendorError(f"THOUSAND_VENDOR={mode!r}: use 'local' or 'cdn'")
    if (
        mode == "local"
        and npm is None
        and not all(_cached(a).exists() for a in ASSETS.values())
    ):
        mode = "cdn"  # once per build: each language's build is its own process
        print(
            "thousand.site: npm not found, so pages load MathJax and Mermaid "
            "from a CDN (install Node.js to self-host them)",
            file=sys.stderr,
        )
    if mode == "cdn":
        return {name: (a.cdn_url, None) for name, a in ASSETS.items()}
    return {name: (a.site_path, fetch(a, npm or "npm")) for name, a in ASSETS.items()}
