"""How long the player's page takes from a click to the updated table, in a real browser on
loopback.

``canasta play --ui web`` runs against bots; the system Chromium (driven by Playwright) plays its
seat by clicking the page's buttons (Draw, Meld, Discard). For each click, the page itself times
from the click event to the end of the first frame after the render that changed the hand (its
layout and paint done): the POST, the seat's session, the host's check and log over its TCP
connection, the view back, the server-sent snapshot, the page's redraw. Figures are the page's
own clock (``performance.now``), so Playwright's driving costs nothing in them.

What is timed is the person's own move. The bots play at a person's pace (``--delay``, the
play command's default 0.3 s): with ``--delay 0`` their moves after a discard run on the same
two processes (the seat and host, the browser) while the person's discard is still on its way,
which measures the bots' pace as much as the page (indicative, one loaded 2-core machine: p95
60 to 90 ms at 0.3 s, 80 to 105 ms at 0 s).

Each click is split where the page can see it: ``post`` (the click to the POST's answer: the
seat has signed and sent the move), ``snapshot`` (the click to the arrival of the snapshot that
changed the hand: the host's check and durable log, the record and view back, the seat's
checks, the push), ``redraw`` (the page's render of it) and ``frame`` (from the render to the
next frame's end: waiting for it, the browser's style, layout and paint).

    PYTHONPATH=. python scripts/bench_web.py [--clicks 60] [--variant classic-2p] [--delay 0.3]
        [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from web_driver import (
    PlayProcess,
    browser,
    play_a_move,
    playwright_missing,
    version,
    wait_for_change,
    wait_for_turn,
)

# Installed before the page's script: notes when each snapshot arrives (its event's first listener).
ARRIVALS = """
window.__arrivals = [];
const PageEventSource = window.EventSource;
window.EventSource = function (url) {
  const source = new PageEventSource(url);
  source.addEventListener("snapshot", () => window.__arrivals.push(performance.now()));
  return source;
};
"""

# Installed in the page once it runs: a capture-phase click listener starts the clock, an
# observer of the body's data-hand (set at the end of each render) stops it once the next frame
# is laid out and painted.
PROBE = """
() => {
  const bench = { samples: [], renders: [], posts: [], parts: [], t0: null, hand: null };
  const fetch0 = window.fetch;
  window.fetch = async (...args) => {  // the POST's own round trip, to split the figure
    const t = performance.now();
    const answer = await fetch0(...args);
    if (args[0] === "/act") {
      bench.posts.push(performance.now() - t);
      bench.posted = performance.now();
    }
    return answer;
  };
  window.__bench = bench;
  document.addEventListener("click", (e) => {
    if (e.target.closest("#controls button[data-action]")) {
      bench.t0 = performance.now();
      bench.hand = document.body.dataset.hand;
    }
  }, true);
  new MutationObserver(() => {
    if (bench.t0 === null || document.body.dataset.hand === bench.hand) return;
    const t0 = bench.t0;
    const rendered = performance.now();
    bench.t0 = null;
    bench.renders.push(parseFloat(document.body.dataset.renderMs));
    // the snapshot drawn: the last to arrive before this render
    const arrived = window.__arrivals.filter((t) => t <= rendered).pop();
    const posted = bench.posted;
    // the frame's own style, layout and paint run after its animation callbacks, in the same
    // task: a message posted from one arrives once they are done
    requestAnimationFrame(() => {
      const painted = new MessageChannel();
      painted.port1.onmessage = () => {
        const now = performance.now();
        bench.samples.push(now - t0);
        bench.parts.push({
          post: posted !== undefined && posted >= t0 ? posted - t0 : null,
          snapshot: arrived !== undefined && arrived >= t0 ? arrived - t0 : null,
          frame: now - rendered,
        });
      };
      painted.port2.postMessage(null);
    });
  }).observe(document.body, { attributes: true, attributeFilter: ["data-hand"] });
}
"""


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def measure(clicks: int, variant: str, delay: float = 0.3) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        play = PlayProcess(
            Path(tmp),
            *("--variant", variant, "--hands", "20", "--delay", f"{delay:g}", "--name", "bench"),
        )
        started = time.monotonic()
        try:
            with browser() as b:
                page = b.new_page(viewport={"width": 1280, "height": 800})
                page.add_init_script(ARRIVALS)
                page.goto(play.url)
                page.wait_for_selector("body[data-version]")
                page.evaluate(PROBE)
                samples: list[float] = []
                measured: dict[str, Any] = {"samples": [], "renders": [], "posts": [], "parts": []}
                while len(samples) < clicks:
                    kind = wait_for_turn(page)
                    if kind == "sheet":
                        if page.locator("#next-hand").is_visible():
                            before = version(page)
                            page.locator("#next-hand").click()
                            wait_for_change(page, before)
                            continue
                        break  # the match is over
                    before = version(page)
                    play_a_move(page)
                    wait_for_change(page, before)
                    measured = page.evaluate("() => window.__bench")
                    samples = [float(s) for s in measured["samples"]]
        finally:
            play.stop()
    samples = samples[:clicks]
    if not samples:
        raise SystemExit("no click was measured")
    renders = [float(r) for r in measured["renders"]][:clicks]
    posts = [float(p) for p in measured["posts"]]
    parts = measured["parts"][:clicks]

    def part(name: str, fraction: float) -> float | None:
        values = [float(p[name]) for p in parts if p.get(name) is not None]
        return round(percentile(values, fraction), 2) if values else None

    return {
        "benchmark": "web click to updated table",
        "variant": variant,
        "bot_delay_s": delay,
        "clicks": len(samples),
        "p50_ms": round(percentile(samples, 0.50), 2),
        "p95_ms": round(percentile(samples, 0.95), 2),
        "mean_ms": round(statistics.fmean(samples), 2),
        "max_ms": round(max(samples), 2),
        # of which: the POST's answer (the seat took the move) and the page's redraw
        "post_p50_ms": round(percentile(posts, 0.50), 2) if posts else None,
        "render_p50_ms": round(percentile(renders, 0.50), 2) if renders else None,
        "render_p95_ms": round(percentile(renders, 0.95), 2) if renders else None,
        # the click to: the POST's answer, the changing snapshot's arrival; the render to a frame
        "parts_ms": {
            name: {"p50": part(name, 0.50), "p95": part(name, 0.95)}
            for name in ("post", "snapshot", "frame")
        },
        "goal_p95_ms": 50,
        "seconds": round(time.monotonic() - started, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clicks", type=int, default=60, help="clicks to time (default 60)")
    parser.add_argument("--variant", default="classic-2p")
    parser.add_argument(
        "--delay",
        type=float,
        default=0.3,
        help="the bots' pace in seconds (default 0.3, the play command's; 0: as fast as they can)",
    )
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
    args = parser.parse_args()
    missing = playwright_missing()
    if missing:
        raise SystemExit(missing)
    result = measure(args.clicks, args.variant, args.delay)
    if args.json:
        print(json.dumps(result))
        return
    parts = result["parts_ms"]
    print(
        f"{result['clicks']} clicks ({result['variant']}, bots at {args.delay:g} s): "
        f"p50 {result['p50_ms']} ms, p95 {result['p95_ms']} ms, mean {result['mean_ms']} ms, "
        f"max {result['max_ms']} ms "
        f"(goal: p95 under {result['goal_p95_ms']} ms); the POST's answer p50 "
        f"{result['post_p50_ms']} ms, the redraw p50 {result['render_p50_ms']} ms, "
        f"p95 {result['render_p95_ms']} ms"
    )
    print(
        "  p50/p95 from the click: the POST answered "
        f"{parts['post']['p50']}/{parts['post']['p95']} ms, the snapshot arrived "
        f"{parts['snapshot']['p50']}/{parts['snapshot']['p95']} ms; from the render to the "
        f"frame {parts['frame']['p50']}/{parts['frame']['p95']} ms"
    )


if __name__ == "__main__":
    main()
