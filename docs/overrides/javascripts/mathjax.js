// MathJax reads the \( \) and \[ \] delimiters that pymdownx.arithmatex (generic) emits.
window.MathJax = {
  tex: {
    inlineMath: [["\\(", "\\)"]],
    displayMath: [["\\[", "\\]"]],
    processEscapes: true,
    processEnvironments: true,
  },
  options: {
    ignoreHtmlClass: ".*|",
    processHtmlClass: "arithmatex",
  },
};

// Material may swap pages without a reload (instant navigation): typeset each new one.
// The first page is typeset by MathJax's own start-up.
let firstPage = true;
document$.subscribe(() => {
  if (firstPage) {
    firstPage = false;
    return;
  }
  MathJax.startup.output.clearCache();
  MathJax.typesetClear();
  MathJax.texReset();
  MathJax.typesetPromise();
});
