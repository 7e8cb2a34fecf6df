// extractconf review: keyboard-first decisions. Values are read from data- attributes and
// written with textContent only (document text is untrusted).
"use strict";
(function () {
  const form = document.getElementById("decision");
  for (const box of document.querySelectorAll(".box")) {
    for (const k of ["left", "top", "width", "height"]) box.style[k] = box.dataset[k] + "%";
  }
  if (!form) return;
  const input = document.getElementById("value");
  const status = document.getElementById("status");
  const shown = form.dataset.shownNone === "1" ? null : form.dataset.shown;
  let busy = false;
  input.focus();
  input.select();

  async function send(action, value) {
    if (busy) return;
    busy = true;
    status.textContent = "saving...";
    try {
      const r = await fetch("/decide", {
        method: "POST",
        credentials: "same-origin",
        headers: {"Content-Type": "application/json"},
        body: JSON.stringify({lease: form.dataset.lease, action: action, value: value}),
      });
      if (r.ok) {
        window.location.replace("/");
        return;
      }
      const j = await r.json().catch(() => ({error: r.statusText}));
      status.textContent = "not saved: " + (j.error || r.status);
    } catch (e) {
      status.textContent = "not saved: " + e;
    }
    busy = false;
  }

  function submitValue() {
    const typed = input.value;
    if ((shown === null && typed === "") || typed === shown) send("accept", shown);
    else send("correct", typed);
  }

  form.addEventListener("submit", (e) => { e.preventDefault(); submitValue(); });
  document.getElementById("btn-absent").addEventListener("click", () => send("absent", null));
  document.getElementById("btn-skip").addEventListener("click", () => send("skip", null));
  // the value as OCR read it a second time, alone: into the box, for Enter to save
  const alone = document.getElementById("btn-alone");
  function useAlone() {
    if (!alone) return;
    input.value = alone.dataset.value;
    input.focus();
  }
  if (alone) alone.addEventListener("click", useAlone);
  document.addEventListener("keydown", (e) => {
    if (e.altKey && e.code === "KeyR") { e.preventDefault(); useAlone(); }
    else if (e.altKey && e.code === "KeyN") { e.preventDefault(); send("absent", null); }
    else if ((e.altKey && e.code === "KeyS") || e.key === "Escape") { e.preventDefault(); send("skip", null); }
  });
})();
