// Marks on <body> whether the page rendered: the number of images and of images that failed to
// load, and of formulas and of formulas MathJax typeset. tests/test_docs_site.py reads them from a
// headless browser.
window.addEventListener("load", function () {
  function probe() {
    var images = Array.prototype.slice.call(document.images);
    var broken = images.filter(function (img) { return !img.complete || img.naturalWidth === 0; });
    var math = document.querySelectorAll("span.math, div.math");
    var typeset = Array.prototype.filter.call(math, function (el) {
      return el.querySelector("mjx-container") !== null || el.tagName.toLowerCase() === "mjx-container";
    });
    document.body.setAttribute("data-images", String(images.length));
    document.body.setAttribute("data-broken-images", String(broken.length));
    document.body.setAttribute("data-math", String(math.length));
    document.body.setAttribute("data-typeset", String(typeset.length));
  }
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    MathJax.startup.promise.then(probe, probe);
  } else {
    probe();
  }
});
