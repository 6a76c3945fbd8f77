// The card preview shows the front until "Flip", as a learner studies it; without this script both sides show.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  for (const card of document.querySelectorAll("[data-study-card]")) {
    const back = card.querySelector("[data-study-card-back]");
    const flip = card.querySelector("[data-study-card-flip]");
    if (!back || !flip) {
      continue;
    }
    back.hidden = true;
    flip.hidden = false;
    flip.addEventListener("click", () => {
      back.hidden = !back.hidden;
      flip.textContent = back.hidden ? "Flip" : "Flip back";
    });
  }
});
