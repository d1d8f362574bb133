"""What a recorded GPU result depends on: one digest that follows behaviour, not bytes.

The ledger keeps, beside each result, a fingerprint of the code that made it; the CPU
tests call a result stale when the fingerprint of the code as it is now differs. A
comment, a docstring, a snippet marker (`// --8<-- [start:x]`, `# --8<-- [start:x]`)
or a change of spacing leaves the fingerprint as it was; a changed constant, kernel
line or helper changes it.

CUDA C (.cu, .cuh, and the .cpp/.h an extension builds) is fingerprinted as tokens:
comments dropped, whitespace collapsed (a preprocessor line still ends at its end of
line), and each `#include "local.cuh"` replaced by that header's tokens, the way the
preprocessor would include it. The other choice was the PTX nvcc makes of the file,
which follows behaviour more closely still, but differs from one nvcc release to the
next: a ledger would read as stale on a machine with another nvcc, and the CPU layer
would need nvcc at all. The tokens come from a small tokenizer here, not from a
compiler, so they are the same on every machine. Macros are not expanded and system
headers not read: those belong to the toolkit, which each run records (`nvcc`).

Python is fingerprinted as its syntax tree with docstrings removed (comments do not
reach the tree). The tree is written out here field by field, leaving out fields that
are empty or None, rather than with `ast.dump`, whose text changes between Python
releases (3.12 added `type_params`, 3.13 stopped showing empty fields), and an
f-string's text parts joined (3.12.1 adds an empty one to some). A Python file
counts with every `thousand.*` module it imports, transitively (relative imports and
imports inside functions too, and the packages above each module, whose
`__init__.py` runs on import), each by the same rule, and with the CUDA C a module
compiles: the `.cu` beside it of the same name (a family's launcher and its kernels)
and any `.cu` beside it that it names in a string ("hold.cu"). Two kinds of module
are left out, because no recorded result runs them:

- `thousand.bench.ledger` and this module: the bookkeeping that computes and compares
  fingerprints (experiments import the ledger for it);
- `thousand.cpu`, the CPU backend, when it is reached through the runtime
  (`thousand.cuda` enters it only when the CPU backend is in use, which a GPU run
  never is). A file that imports `thousand.cpu` itself (the B17 snippet) counts it.

Moving a helper from one module to another still changes the fingerprint: the module
it leaves gains an import. Telling a move from a change of which function a name
means would take name resolution across modules, which this does not attempt.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import re
from pathlib import Path

C_SUFFIXES = {".cu", ".cuh", ".c", ".cpp", ".h", ".hpp"}
# Modules whose code no recorded result runs (see the docstring).
NOT_RUN = ("thousand.bench.ledger", "thousand.bench.fingerprint")
RUNTIME_ONLY = "thousand.cpu"  # counted only when a fingerprinted file imports it

# -- CUDA C -------------------------------------------------------------------------

_C_TOKEN = re.compile(
    r"""
    (?P<string>(?:u8|[uUL])?"(?:\\.|[^"\\\n])*")
   |(?P<char>[uUL]?'(?:\\.|[^'\\\n])*')
   |(?P<comment>//[^\n]*|/\*.*?\*/)
   |(?P<number>\.?\d(?:[eEpP][+-]|[\w.])*)
   |(?P<name>[A-Za-z_]\w*)
   |(?P<newline>\n)
   |(?P<space>(?:[ \t\r\f\v]|\\\n)+)
   |(?P<punct><<<|>>>|<<=|>>=|->\*|\.\.\.|::|->|\+\+|--|<<|>>|&&|\|\||\#\#|\.\*
      |[-+*/%&|^!=<>]=|[^\s\w])
    """,
    re.S | re.X,
)


@functools.cache
def c_tokens(text: str) -> tuple[str, ...]:
    """The tokens of C or CUDA source without its comments; "\\n" ends each
    preprocessor line (elsewhere a line break is only whitespace)."""
    out: list[str] = []
    directive = False
    at_line_start = True
    for m in _C_TOKEN.finditer(text):
        kind, tok = m.lastgroup, m.group()
        if kind == "newline":
            if directive:
                out.append("\n")
                directive = False
            at_line_start = True
            continue
        if kind in ("space", "comment"):
            # a comment is a space, even one across lines: it ends no directive
            continue
        if at_line_start and tok == "#":
            directive = True
        at_line_start = False
        out.append(tok)
    if directive:
        out.append("\n")
    return tuple(out)


def c_code(path: Path, _open: tuple[Path, ...] = ()) -> str:
    """The tokens of a C/CUDA file, its local `#include "..."` headers put in place
    (a header already being included is not entered again)."""
    tokens = c_tokens(path.read_text(encoding="utf-8"))
    out: list[str] = []
    i = 0
    while i < len(tokens):
        name = tokens[i + 2] if i + 2 < len(tokens) else ""
        if tokens[i : i + 2] == ("#", "include") and name.startswith('"'):
            header = path.parent / name[1:-1]
            if header.exists() and header.resolve() not in _open:
                out.append(c_code(header, (*_open, path.resolve())))
                i = tokens.index("\n", i) + 1  # the rest of the #include line
                continue
        out.append(tokens[i])
        i += 1
    return " ".join(out)


# -- Python -------------------------------------------------------------------------


def _strip_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        if isinstance(
            node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
        ):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                node.body = body[1:]
    return tree


def _joined(values: list) -> list:
    """An f-string's parts with adjacent text joined and empty text dropped (Python
    3.12.1 parses some f-strings with an empty part that 3.11 and 3.13 do not)."""
    parts: list = []
    for v in values:
        if isinstance(v, ast.Constant) and isinstance(v.value, str):
            if parts and isinstance(parts[-1], ast.Constant):
                parts[-1] = ast.Constant(value=parts[-1].value + v.value)
                continue
            if not v.value:
                continue
        parts.append(v)
    return parts


def _written(node) -> str:
    """A syntax tree as text: node types and non-empty fields, no positions."""
    if isinstance(node, ast.JoinedStr):
        node = ast.JoinedStr(values=_joined(node.values))
    if isinstance(node, ast.AST):
        fields = []
        for name in node._fields:
            value = getattr(node, name, None)
            if value is None or (isinstance(value, list) and not value):
                continue
            fields.append(f"{name}={_written(value)}")
        return f"{type(node).__name__}({', '.join(fields)})"
    if isinstance(node, list):
        return "[" + ", ".join(_written(v) for v in node) + "]"
    return f"{type(node).__name__}:{node!r}"


@functools.cache
def _tree(text: str) -> ast.Module:
    """The parsed source, parsed once (not to be changed: it is shared)."""
    return ast.parse(text)


@functools.cache
def python_code(text: str) -> str:
    """Python source as its syntax tree without docstrings (comments vanish in
    parsing), written the same way by every Python release."""
    return _written(_strip_docstrings(ast.parse(text)))


def ipython_code(text: str) -> str:
    """A notebook cell: its Python by `python_code`, its IPython lines (%magic,
    !shell) as they are, without the spaces around them."""
    magic = [ln.strip() for ln in text.splitlines() if ln.strip()[:1] in ("%", "!")]
    return python_code(_python_of_cell(text)) + "".join(f"\n{m}" for m in magic)


# -- what a Python file imports -----------------------------------------------------


def module_name(path: Path, src: Path) -> str | None:
    """thousand/kernels/copy.py -> thousand.kernels.copy (a package: its name)."""
    try:
        parts = list(path.relative_to(src).with_suffix("").parts)
    except ValueError:
        return None
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts) or None


def modules_in(src: Path) -> dict[str, Path]:
    """Every `thousand.*` module under `src`, by name."""
    found = {}
    for path in sorted((src / "thousand").rglob("*.py")):
        name = module_name(path, src)
        if name and (path.name == "__init__.py" or name not in found):
            found[name] = path
    return found


@functools.cache
def _imported(text: str, package: str) -> tuple[str, ...]:
    """Module names a source imports (absolute, relative ones resolved against
    `package`; `from m import n` names both m and m.n)."""
    found = []
    for node in ast.walk(_tree(text)):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                if not package:
                    continue
                up = package.split(".")
                up = up[: len(up) - (node.level - 1)] if node.level > 1 else up
                base = ".".join([*up, *([base] if base else [])])
            found.append(base)
            found += [f"{base}.{a.name}" for a in node.names]
    return tuple(found)


def _with_parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


def _excluded(name: str) -> bool:
    return any(name == m or name.startswith(m + ".") for m in NOT_RUN)


def _in_cpu(name: str) -> bool:
    return name == RUNTIME_ONLY or name.startswith(RUNTIME_ONLY + ".")


def imports_of(text: str, package: str, known: dict, cpu: bool) -> set[str]:
    """The `thousand.*` modules (with their parent packages) a source imports, of
    those `known`; the CPU backend's only with `cpu` or from inside it."""
    found = set()
    for name in _imported(text, package):
        for m in _with_parents(name):
            if _excluded(m) or m not in known:
                continue
            if _in_cpu(m) and not cpu and not _in_cpu(package):
                continue
            found.add(m)
    return found


@functools.cache
def selects_cpu(text: str) -> bool:
    """Whether source runs the CPU backend itself: it imports `thousand.cpu` at
    its top level, or calls `use_backend("cpu")`."""
    tree = _tree(text)
    for node in tree.body:
        if isinstance(node, ast.Import):
            if any(_in_cpu(a.name) for a in node.names):
                return True
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            if any(_in_cpu(n) for n in names):
                return True
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args:
            f = node.func
            called = f.id if isinstance(f, ast.Name) else getattr(f, "attr", "")
            arg = node.args[0]
            if called == "use_backend" and getattr(arg, "value", None) == "cpu":
                return True
    return False


def _package(name: str | None, path: Path) -> str:
    """The package relative imports in `path` (module `name`) start from."""
    if not name:
        return ""
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def closure(
    entries: list[Path], src: Path, code: str = "", cpu: bool = False
) -> dict[str, Path]:
    """Every `thousand.*` module the Python files `entries` (and `code`, a
    notebook's Python) reach through imports, by name; the CPU backend's modules
    only with `cpu`."""
    known = modules_in(src)
    todo: set[str] = set()
    for path in entries:
        package = _package(module_name(path, src), path)
        todo |= imports_of(path.read_text(encoding="utf-8"), package, known, cpu)
    if code:
        todo |= imports_of(code, "", known, cpu)
    seen: dict[str, Path] = {}
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        path = seen[name] = known[name]
        package = _package(name, path)
        todo |= imports_of(path.read_text(encoding="utf-8"), package, known, cpu)
    return seen


@functools.cache
def _cu_named(text: str) -> tuple[str, ...]:
    """The file names ending in .cu that Python source spells out in a string."""
    return tuple(
        node.value
        for node in ast.walk(_tree(text))
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and re.fullmatch(r"[\w.-]+\.cu", node.value)
    )


def _cuda_of(path: Path) -> list[Path]:
    """The CUDA files a Python module compiles: the .cu of its own name beside it,
    and any .cu beside it that it names in a string."""
    found = {path.with_suffix(".cu")} if path.name != "__init__.py" else set()
    found |= {path.parent / n for n in _cu_named(path.read_text(encoding="utf-8"))}
    return sorted(p for p in found if p.exists())


# -- the fingerprint ----------------------------------------------------------------


def code_of(path: Path) -> str:
    """What counts of one file: tokens of C/CUDA, the tree of Python, else bytes."""
    if path.suffix in C_SUFFIXES:
        return c_code(path)
    if path.suffix == ".py":
        return python_code(path.read_text(encoding="utf-8"))
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _label(path: Path, src: Path) -> str:
    try:
        return path.relative_to(src).as_posix()
    except ValueError:
        return path.name


def _python_of_cell(text: str) -> str:
    return "\n".join(ln for ln in text.splitlines() if ln.strip()[:1] not in "%!")


def fingerprint(entries: list[Path], src: Path, cells: tuple[str, ...] = ()) -> str:
    """The digest of `entries` (each by `code_of`), of `cells` (a notebook's code
    cells, each by `ipython_code`) and of all they import and compile."""
    h = hashlib.sha256()

    def add(label: str, text: str) -> None:
        h.update(label.encode() + b"\0" + text.encode() + b"\0")

    for path in entries:
        add(path.name, code_of(path))
    for i, cell in enumerate(cells):
        add(f"<cell {i}>", ipython_code(cell))
    python = [p for p in entries if p.suffix == ".py"]
    notebook = "\n".join(_python_of_cell(c) for c in cells)
    modules = closure(python, src, notebook)
    texts = [notebook, *(p.read_text(encoding="utf-8") for p in python)]
    texts += [p.read_text(encoding="utf-8") for p in modules.values()]
    if any(selects_cpu(t) for t in texts if t):
        modules = closure(python, src, notebook, cpu=True)
    counted = {p.resolve() for p in entries}
    cuda: set[Path] = set()
    for path in python:
        cuda.update(_cuda_of(path))
    for name in sorted(modules):
        path = modules[name]
        cuda.update(_cuda_of(path))
        if path.resolve() not in counted:
            add(name, code_of(path))
    for path in sorted(cuda, key=lambda p: _label(p, src)):
        if path.resolve() not in counted:
            add(_label(path, src), code_of(path))
    return h.hexdigest()
