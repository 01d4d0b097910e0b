// Loaded before the page is drawn (not deferred): the theme the toggle chose, so the page never flashes the other.
"use strict";

(function () {
  try {
    const chosen = localStorage.getItem("orchestra.theme");
    if (chosen === "light" || chosen === "dark") document.documentElement.dataset.theme = chosen;
  } catch (_) {
    // storage refused: the system's theme
  }
})();
