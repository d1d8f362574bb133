"""TeX as the plain text a reader can take in where no math is typeset.

The table of contents and the search index show text, not typeset math: there a
formula is written out with the symbols it stands for, `\\(P\\)` as P,
`\\text{字节}` as 字节, `\\frac{a}{b}` as a/b, `x_{i}^{2}` as x_i^2, so that no
backslash command or math delimiter reaches the reader. It is a reading aid, not a
renderer: what it does not know, it writes as the command's name.
"""

from __future__ import annotations

import re
import unicodedata

# The tables below are laid out by hand, several entries a line.
# fmt: off
SYMBOLS = {
    # Greek
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε",
    "varepsilon": "ε", "zeta": "ζ", "eta": "η", "theta": "θ", "iota": "ι",
    "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν", "xi": "ξ", "pi": "π",
    "rho": "ρ", "sigma": "σ", "tau": "τ", "phi": "φ", "varphi": "φ", "chi": "χ",
    "psi": "ψ", "omega": "ω", "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ",
    "Lambda": "Λ", "Xi": "Ξ", "Pi": "Π", "Sigma": "Σ", "Phi": "Φ", "Psi": "Ψ",
    "Omega": "Ω", "ell": "ℓ",
    # operators and relations
    "times": "×", "cdot": "·", "div": "÷", "pm": "±", "mp": "∓", "le": "≤",
    "leq": "≤", "ge": "≥", "geq": "≥", "ne": "≠", "neq": "≠", "approx": "≈",
    "sim": "∼", "equiv": "≡", "propto": "∝", "in": "∈", "notin": "∉",
    "subset": "⊂", "subseteq": "⊆", "cup": "∪", "cap": "∩", "oplus": "⊕",
    "otimes": "⊗", "odot": "⊙", "circ": "∘", "ast": "∗", "star": "⋆",
    "to": "→", "rightarrow": "→", "leftarrow": "←", "mapsto": "↦",
    "Rightarrow": "⇒", "Leftarrow": "⇐", "iff": "⇔", "Leftrightarrow": "⇔",
    "Longleftrightarrow": "⟺", "implies": "⇒", "forall": "∀", "exists": "∃",
    "infty": "∞", "partial": "∂", "nabla": "∇", "sum": "Σ", "prod": "Π",
    "int": "∫", "top": "ᵀ", "prime": "′", "dots": "…", "ldots": "…",
    "cdots": "⋯", "vdots": "⋮", "mid": "|", "vert": "|", "lvert": "|",
    "rvert": "|", "Vert": "‖", "lVert": "‖", "rVert": "‖", "langle": "⟨",
    "rangle": "⟩", "lfloor": "⌊", "rfloor": "⌋", "lceil": "⌈", "rceil": "⌉",
    "bmod": "mod", "pmod": "mod", "lbrace": "{", "rbrace": "}",
    "neg": "¬", "land": "∧", "lor": "∨", "emptyset": "∅",
}
# commands that only size, space or style what follows: dropped
SILENT = {
    "left", "right", "big", "Big", "bigg", "Bigg", "bigl", "bigr", "Bigl", "Bigr",
    "biggl", "biggr", "displaystyle", "textstyle", "scriptstyle", "limits",
    "nolimits", "mathrel", "mathop", "mathbin", "middle",
}
SPACES = {"quad": " ", "qquad": " ", ",": " ", ";": " ", ":": " ", "!": "", " ": " "}
ESCAPED = {"{": "{", "}": "}", "%": "%", "_": "_", "#": "#", "&": "&", "$": "$",
           "|": "‖"}
# commands whose one argument is the text itself
WRAPPERS = {
    "text", "textrm", "textbf", "textit", "texttt", "textsf", "mathrm", "mathbf",
    "mathit", "mathsf", "mathtt", "mathcal", "mathfrak", "boldsymbol", "bm",
    "operatorname", "mbox", "hbox", "underline",
}
DOUBLE_STRUCK = {"R": "ℝ", "N": "ℕ", "Z": "ℤ", "Q": "ℚ", "C": "ℂ", "E": "𝔼", "P": "ℙ"}
ACCENTS = {"hat": "\u0302", "widehat": "\u0302", "bar": "\u0304", "overline": "\u0305",
           "tilde": "\u0303", "widetilde": "\u0303", "vec": "\u20d7", "dot": "\u0307"}
FRACTIONS = {"frac", "tfrac", "dfrac", "cfrac"}
# fmt: on
# under/over annotations: keep the body, drop the note set under or over it
BRACES = {"underbrace", "overbrace"}


class _Reader:
    def __init__(self, tex: str):
        self.s, self.i = tex, 0

    def done(self) -> bool:
        return self.i >= len(self.s)

    def command(self) -> str:
        """After a backslash: a run of letters, or one other character."""
        m = re.compile(r"[A-Za-z]+|.", re.S).match(self.s, self.i)
        if m is None:
            return ""
        self.i = m.end()
        return m.group(0)

    def skip_spaces(self) -> None:
        while not self.done() and self.s[self.i].isspace():
            self.i += 1

    def group(self) -> str:
        """The next argument as raw TeX: a {...} group's inside, or one token."""
        self.skip_spaces()
        if self.done():
            return ""
        if self.s[self.i] == "{":
            depth, start = 0, self.i
            while not self.done():
                c = self.s[self.i]
                if c == "\\":
                    self.i += 2
                    continue
                depth += c == "{"
                depth -= c == "}"
                self.i += 1
                if depth == 0:
                    return self.s[start + 1 : self.i - 1]
            return self.s[start + 1 :]
        if self.s[self.i] == "\\":
            start = self.i
            self.i += 1
            self.command()
            return self.s[start : self.i]
        self.i += 1
        return self.s[self.i - 1]

    def optional(self) -> None:
        """Skip a [..] argument (\\sqrt[3]{x} keeps its index: see text())."""
        if self.s.startswith("[", self.i):
            end = self.s.find("]", self.i)
            self.i = len(self.s) if end < 0 else end + 1


def _wrap(text: str) -> str:
    """A fraction's side or a root's body: parenthesised unless one symbol or word."""
    text = text.strip()
    return text if re.fullmatch(r"[\w.′]+", text) else f"({text})"


def text(tex: str) -> str:
    """The plain text of a TeX formula (no delimiters)."""
    r, out = _Reader(tex), []
    while not r.done():
        c = r.s[r.i]
        r.i += 1
        if c == "\\":
            name = r.command()
            if name == "\\":
                out.append(" ")
            elif name in ESCAPED:
                out.append(ESCAPED[name])
            elif name in SPACES:
                out.append(SPACES[name])
            elif name in SYMBOLS:
                out.append(SYMBOLS[name])
                if name.isalpha():
                    out.append(" " if name in {"bmod", "pmod"} else "")
            elif name in SILENT:
                pass
            elif name in ("begin", "end"):
                r.group()
                if name == "begin" and r.s.startswith("{", r.i):
                    r.group()  # an array's column spec
            elif name in WRAPPERS:
                out.append(text(r.group()))
            elif name == "mathbb":
                body = text(r.group())
                out.append(DOUBLE_STRUCK.get(body, body))
            elif name in ACCENTS:
                body = text(r.group())
                out.append(body + ACCENTS[name] if len(body) == 1 else body)
            elif name in FRACTIONS:
                top, bottom = text(r.group()), text(r.group())
                out.append(f"{_wrap(top)}/{_wrap(bottom)}")
            elif name == "sqrt":
                r.optional()
                out.append("√" + _wrap(text(r.group())))
            elif name in BRACES:
                out.append(text(r.group()))
                r.skip_spaces()
                if r.s.startswith(("_", "^"), r.i):
                    r.i += 1
                    r.group()
            elif name in ("xrightarrow", "xleftarrow"):
                r.optional()
                label = text(r.group())
                out.append(f"→({label})" if name == "xrightarrow" else f"←({label})")
            elif name.isalpha():
                out.append(name)  # \log, \max, \tanh, ... and anything unknown
                if not r.done() and r.s[r.i].isalpha():
                    out.append(" ")
        elif c in "{}":
            pass
        elif c == "&":
            out.append(" ")
        elif c in "_^":
            arg = text(r.group())
            if arg in ("ᵀ", "′"):  # already a superscript
                out.append(arg)
                continue
            out.append(c + (arg if len(arg) <= 1 or arg.isalnum() else f"({arg})"))
        else:
            out.append(c)
    # NFC: y with a combining hat is the one character ŷ where Unicode has it
    return unicodedata.normalize("NFC", re.sub(r"\s+", " ", "".join(out)).strip())


# \( \) and \[ \] as arithmatex writes them (generic mode), and $...$ in headings
_DELIMITED = re.compile(r"\\\((.+?)\\\)|\\\[(.+?)\\\]|\$\$(.+?)\$\$|\$(.+?)\$", re.S)


def inline(source: str) -> str:
    """`source` with every delimited formula in it written as plain text."""
    return _DELIMITED.sub(
        lambda m: text(next(g for g in m.groups() if g is not None)), source
    )
