// The search index (~500 KB gzipped in English, ~650 KB in Chinese) is fetched when
// the reader first turns to search, not with every page. Material's bundle asks for
// it at page load (an XMLHttpRequest today) and hands it to its search worker; this
// script, loaded before the bundle, holds that one request back until the search box
// takes focus or is opened (the "/" and "s" keys focus it too), then lets it go.
// Search then says "Initializing search" for a moment and works as before.
// tests/cpu/test_browser.py holds this: no index at load, the index and results
// after a click in the search box; a Material release that fetches the index some
// other way fails there.
(() => {
  const script = document.currentScript;
  const index = new URL(script.dataset.index, location.href).href;
  let release;
  const wanted = new Promise((resolve) => (release = resolve));
  const isIndex = (url) => {
    try {
      return new URL(String(url), location.href).href === index;
    } catch {
      return false;
    }
  };

  const open = XMLHttpRequest.prototype.open;
  const send = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.open = function (method, url, ...rest) {
    this.tpSearchIndex = isIndex(url);
    return open.call(this, method, url, ...rest);
  };
  XMLHttpRequest.prototype.send = function (...args) {
    if (!this.tpSearchIndex) return send.apply(this, args);
    wanted.then(() => send.apply(this, args));
  };
  const fetch = window.fetch;
  window.fetch = function (input, init) {
    const url = input instanceof Request ? input.url : input;
    if (!isIndex(url)) return fetch.call(this, input, init);
    return wanted.then(() => fetch.call(this, input, init));
  };

  const search = (target) =>
    target instanceof Element &&
    target.closest(".md-search, label[for='__search']") !== null;
  addEventListener("focusin", (e) => search(e.target) && release(), true);
  addEventListener("pointerdown", (e) => search(e.target) && release(), true);
  addEventListener(
    "change",
    (e) => e.target.id === "__search" && e.target.checked && release(),
    true,
  );
})();
