// TeX to SVG while the site is built (src/thousand/site/texsvg.py), with the MathJax
// package the build fetched: the same TeX input and SVG output the pages used to
// load in the browser. Started once per language's build:
//   node texsvg.js MATHJAX_PACKAGE_DIR
// It writes one JSON line with MathJax's stylesheet, then answers each line of
// stdin, a JSON list of [tex, display] pairs, with a JSON list of rendered
// <mjx-container> elements, in order.
const readline = require("readline");

require(process.argv[2] + "/es5/node-main.js")
  .init({
    loader: { load: ["input/tex", "output/svg", "a11y/assistive-mml"] },
    // An undefined macro is an error (data-mjx-error), not red text: the build fails.
    tex: { packages: { "[-]": ["noundefined"] } },
    // Each formula carries the glyphs it uses: a formula needs nothing else.
    svg: { fontCache: "local" },
  })
  .then((MathJax) => {
    const adaptor = MathJax.startup.adaptor;
    const css = adaptor.textContent(MathJax.svgStylesheet());
    process.stdout.write(JSON.stringify({ css }) + "\n");
    const lines = readline.createInterface({ input: process.stdin });
    lines.on("line", (line) => {
      const out = JSON.parse(line).map(([tex, display]) => {
        try {
          return adaptor.outerHTML(MathJax.tex2svg(tex, { display }));
        } catch (e) {
          return `<mjx-container data-mjx-error="${String(e.message)
            .replace(/&/g, "&amp;")
            .replace(/"/g, "&quot;")}"></mjx-container>`;
        }
      });
      process.stdout.write(JSON.stringify(out) + "\n");
    });
  })
  .catch((e) => {
    console.error(e);
    process.exit(1);
  });
