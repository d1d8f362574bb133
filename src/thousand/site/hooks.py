"""MkDocs hooks (mkdocs.yml: hooks): render results directives from the ledger and
access pictures from the CPU backend's traces, and add the SVGs they draw to the
site as generated files."""

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File

from thousand.site import access, vendor
from thousand.site.render import DirectiveError, Results

_results: Results | None = None
_vendored: dict[str, tuple[str, bytes | None]] = {}


def on_config(config):
    global _results, _vendored
    _results = Results(config.extra["results"], config.theme["language"])
    # MathJax and Mermaid: where pages load them from (docs/overrides/main.html).
    try:
        _vendored = vendor.resolve()
    except vendor.VendorError as e:
        raise PluginError(str(e)) from e
    config.extra["vendor"] = {
        name: {"src": src, "integrity": vendor.ASSETS[name].integrity}
        for name, (src, _) in _vendored.items()
    }


def on_page_markdown(markdown, page, config, files):
    try:
        markdown = access.render_page(
            markdown, page.file.src_uri, config.theme["language"]
        )
        return _results.render_page(markdown, page.file.src_uri)
    except (DirectiveError, OSError, KeyError, ValueError) as e:
        raise PluginError(f"results directive: {e}") from e


def on_files(files, config):
    # Plots are drawn while pages render, after files are collected: register every
    # plot the ledger has now, so links to them resolve and the files get written.
    for name in _results.ledger["series"]:
        uri = f"assets/plots/{name}.svg"
        files.append(File.generated(config, uri, content=_results.draw(name)))
    for name in access.names():
        uri = f"assets/access/{name}.svg"
        files.append(File.generated(config, uri, content=access.draw(name)))
    for src, data in _vendored.values():
        if data is not None:
            files.append(File.generated(config, src, content=data))
    return files
