// A run's page, live: ledger events over Server-Sent Events, reconciled by (run, sequence,
// revision). An event is shown once, in sequence order, whatever reconnects or repeats; a read
// that brings nothing changes nothing; the handover is replaced only by one that reflects at
// least as many events (never by an older or empty one).
"use strict";
(function () {
  const run = document.getElementById("run");
  if (!run) return;
  const thread = run.dataset.thread;
  const list = document.getElementById("events");
  const slot = document.getElementById("handover-slot");
  const live = document.getElementById("live");
  const stateLabel = document.getElementById("run-state");
  const shown = new Set(Array.from(list.querySelectorAll("li[data-seq]"), (li) => Number(li.dataset.seq)));
  let last = Math.max(0, ...shown);
  let source = null;
  let refreshing = false;
  let ended = run.dataset.ended === "yes";

  function add(event) {
    if (!Number.isInteger(event.seq) || event.seq <= 0 || shown.has(event.seq)) return;
    const item = document.createElement("li");
    item.value = event.seq;
    item.dataset.seq = String(event.seq);
    item.className = "new";
    item.textContent = event.line; // text, never markup
    const after = Array.from(list.children).find((li) => Number(li.dataset.seq) > event.seq);
    list.insertBefore(item, after || null);
    shown.add(event.seq);
    last = Math.max(last, event.seq);
    list.scrollTop = list.scrollHeight;
  }

  async function refreshHandover() {
    if (refreshing) return;
    refreshing = true;
    try {
      const answer = await fetch(`/runs/${encodeURIComponent(thread)}/handover`, { credentials: "same-origin" });
      if (!answer.ok) return;
      const events = Number(answer.headers.get("X-Warrant-Events"));
      const state = answer.headers.get("X-Warrant-State") || "";
      const html = await answer.text();
      const have = Number(slot.dataset.events || "0");
      if (!html.trim() || !Number.isFinite(events) || events < have) return; // stale or empty: keep ours
      const parsed = new DOMParser().parseFromString(html, "text/html").getElementById("handover");
      const current = document.getElementById("handover");
      if (!parsed) return;
      const newer = Number(parsed.dataset.revision || "0") >= Number(current?.dataset.revision || "0");
      if (!newer) return;
      current ? current.replaceWith(document.adoptNode(parsed)) : slot.appendChild(document.adoptNode(parsed));
      slot.dataset.events = String(events);
      if (state) {
        stateLabel.textContent = state;
        stateLabel.className = `state state-${state}`;
      }
    } finally {
      refreshing = false;
    }
  }

  function connect() {
    if (ended) return;
    source = new EventSource(`/runs/${encodeURIComponent(thread)}/events?after=${last}`);
    source.addEventListener("open", () => {
      live.textContent = "live";
      live.className = "live";
    });
    source.addEventListener("ledger", (message) => {
      try {
        add(JSON.parse(message.data));
      } catch (error) {
        return; // not an event of ours: ignored, nothing erased
      }
      refreshHandover();
    });
    source.addEventListener("ended", () => {
      ended = true;
      source.close();
      live.textContent = "ended";
      live.className = "live";
      refreshHandover().then(() => {
        if (!document.getElementById("artifacts")) setTimeout(() => location.reload(), 300);
      });
    });
    source.addEventListener("error", () => {
      live.textContent = "reconnecting…";
      live.className = "live off";
      if (source.readyState === EventSource.CLOSED) setTimeout(connect, 1000);
    });
  }
  connect();
})();
