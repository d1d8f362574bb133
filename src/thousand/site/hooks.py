"""MkDocs hooks (mkdocs.yml: hooks): render results directives from the ledger and
access pictures from the CPU backend's traces, and add the SVGs they draw to the
site as generated files."""

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File

from thousand.site import access
from thousand.site.render import DirectiveError, Results

_results: Results | None = None


def on_config(config):
    global _results
    _results = Results(config.extra["results"], config.theme["language"])


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
    return files
