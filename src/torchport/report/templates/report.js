// Expand or fold every file, and show only the files whose name holds what is typed.
(function () {
  "use strict";
  var sections = Array.prototype.slice.call(document.querySelectorAll("section.file"));
  function fold(open) {
    sections.forEach(function (section) { section.querySelector("details").open = open; });
  }
  document.getElementById("expand").addEventListener("click", function () { fold(true); });
  document.getElementById("collapse").addEventListener("click", function () { fold(false); });
  var filter = document.getElementById("filter");
  function show() {
    var wanted = filter.value.toLowerCase();
    var shown = 0;
    sections.forEach(function (section) {
      var match = section.getAttribute("data-name").toLowerCase().indexOf(wanted) !== -1;
      section.hidden = !match;
      shown += match ? 1 : 0;
    });
    document.getElementById("shown").textContent = shown + " of " + sections.length + " files";
  }
  filter.addEventListener("input", show);
  show();
})();
