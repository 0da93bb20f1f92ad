// callgate ui: the live timeline of an open session (server-sent events) and nothing else.
// Entries arrive as HTML the server rendered and escaped; they are parsed, never eval'd.
"use strict";
(function () {
  const timeline = document.getElementById("timeline");
  if (!timeline || timeline.dataset.live !== "yes" || !window.EventSource) return;
  const sid = timeline.dataset.session;
  const note = document.getElementById("live-note");
  let last = Number(timeline.dataset.last || "0");
  const source = new EventSource("/s/" + encodeURIComponent(sid) + "/events?after=" + last);

  function parse(html) {
    const t = document.createElement("template");
    t.innerHTML = html;
    return t.content.firstElementChild;
  }

  source.addEventListener("entry", function (ev) {
    const data = JSON.parse(ev.data);
    const node = parse(data.html);
    if (!node) return;
    const empty = document.getElementById("no-entries");
    if (empty) empty.remove();
    const old = document.getElementById("e" + data.seq);
    if (data.kind === "call") {
      const call = node.querySelector(".call");
      if (old) { old.replaceWith(call); }
      else {
        const batch = document.getElementById("b" + data.batch);
        if (batch && batch === timeline.lastElementChild) batch.appendChild(call);
        else timeline.appendChild(node);
      }
    } else if (old) { old.replaceWith(node); }
    else { timeline.appendChild(node); }
    last = Math.max(last, data.seq);
    timeline.dataset.last = String(last);
    const shown = document.getElementById("e" + data.seq);
    if (shown) {
      shown.classList.add("fresh");
      if (window.scrollY + window.innerHeight >= document.body.scrollHeight - 200) {
        shown.scrollIntoView({ block: "end" });
      }
    }
  });
  source.addEventListener("status", function (ev) {
    const data = JSON.parse(ev.data);
    const badge = document.getElementById("status");
    if (badge) { badge.textContent = data.status; badge.className = "badge " + data.status; }
    if (note) note.textContent = "the session is " + data.status;
    source.close();
  });
  source.onerror = function () { if (note) note.textContent = "live: reconnecting…"; };
  source.onopen = function () { if (note) note.textContent = "live: new calls appear as they finish"; };
})();
