// Mermaid (3.4 MiB, ~980 KB gzipped) is loaded when a diagram comes within half a
// screen of the viewport, not with the page. Material's bundle draws every <pre
// class="mermaid"> with a global `mermaid` when it finds one (else it fetches its own
// from a CDN): this script, loaded before the bundle, gives it a stand-in that keeps
// Material's settings (its theme, which follows the light and dark palettes) and,
// asked to draw a diagram, waits until that diagram nears the viewport, loads the
// site's copy of Mermaid (data-src; replacing the stand-in), and lets it draw.
(() => {
  const script = document.currentScript;
  let settings;
  let loading;
  const load = () =>
    (loading ||= new Promise((resolve, reject) => {
      const real = document.createElement("script");
      real.src = script.dataset.src;
      if (script.dataset.integrity) {
        real.integrity = script.dataset.integrity;
        real.crossOrigin = "anonymous";
      }
      real.onload = () => {
        window.mermaid.initialize(settings);
        resolve(window.mermaid);
      };
      real.onerror = () => reject(new Error(`could not load ${real.src}`));
      document.head.append(real);
    }));
  // Material puts the class back on the diagram's <pre> just before it asks to draw
  // its text; a diagram not shown yet (a closed tab) is drawn once it is shown.
  // Printing draws every diagram still waiting, at once.
  const waiting = new Set();
  let printing = false;
  addEventListener("beforeprint", () => {
    printing = true;
    waiting.forEach((go) => go());
  });
  const near = (code) =>
    new Promise((resolve) => {
      const pres = [...document.querySelectorAll("pre.mermaid")].filter(
        (p) => p.textContent === code,
      );
      if (printing || !pres.length || !("IntersectionObserver" in window)) {
        return resolve();
      }
      const go = () => {
        watch.disconnect();
        waiting.delete(go);
        resolve();
      };
      const watch = new IntersectionObserver(
        (seen) => seen.some((e) => e.isIntersecting) && go(),
        { rootMargin: "50% 0px" },
      );
      waiting.add(go);
      pres.forEach((p) => watch.observe(p));
    });
  window.mermaid = {
    initialize(options) {
      settings = options;
    },
    async render(id, code) {
      await near(code);
      return (await load()).render(id, code);
    },
  };
})();
