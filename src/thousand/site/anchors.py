"""Links to a section of the same page whose id is not ASCII (every Chinese heading).

Material's bundle reads the section a link leads to from `location.hash` as it is,
percent-encoded: `#核心思想` arrives as `#%E6%A0%B8...`, no element has that id, and
what Material does on reaching a section was left undone. The visible cost: a tap on
a section in the phone's drawer scrolled the page behind the drawer and left the
drawer open over it (the English site, with ASCII ids, closed it). The bundle the
site ships decodes the hash first (a malformed one is kept as it is). A Material
release that changes the function fails the build here.
"""

from __future__ import annotations

import re
from pathlib import Path

from thousand.site.search import mend_files

BUNDLES = "assets/javascripts"
RAW = re.compile(r"function (\w+)\(\)\{return location\.hash\.slice\(1\)\}")
DECODED = (
    "function {name}(){{let h=location.hash.slice(1);"
    "try{{return decodeURIComponent(h)}}catch(e){{return h}}}}"
)


class AnchorPatchError(RuntimeError):
    pass


def mend(source: str) -> str:
    found = RAW.findall(source)
    if not found and re.search(r"try\{return decodeURIComponent\(h\)\}", source):
        return source  # mended already
    if len(found) != 1:
        raise AnchorPatchError(
            f"Material's bundle has {len(found)} functions returning "
            "location.hash.slice(1) (expected 1): see src/thousand/site/anchors.py"
        )
    return RAW.sub(lambda m: DECODED.format(name=m.group(1)), source)


def mend_site(site_dir: Path) -> list[Path]:
    return mend_files(site_dir, BUNDLES, "bundle.*.min.js", mend, AnchorPatchError)
