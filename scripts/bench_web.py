"""How long the player's page takes from a click to the updated table, in a real browser on
loopback.

``canasta play --ui web`` runs against bots; the system Chromium (driven by Playwright) plays its
seat by clicking the page's buttons (Draw, Meld, Discard). For each click, the page itself times
from the click event to the end of the first frame after the render that changed the hand (its
layout and paint done): the move on the page's WebSocket, the seat's session, the host's check
and log over its TCP connection, the view back, the server-sent snapshot, the page's redraw.
Figures are the page's own clock (``performance.now``), so Playwright's driving costs nothing
in them.

What is timed is the person's own move. The bots play at a person's pace (``--delay``, the
play command's default 0.3 s): with ``--delay 0`` their moves after a discard run on the same
two processes (the seat and host, the browser) while the person's discard is still on its way,
which measures the bots' pace as much as the page (indicative, one loaded 2-core machine: p95
60 to 90 ms at 0.3 s, 80 to 105 ms at 0 s).

Each click is split where the page can see it: ``post`` (the click to a POST's answer, when
the page posted the move: only while its socket is down, and then the answer comes with the next
push), ``snapshot`` (the click to the arrival of the snapshot that changed the
hand), ``deliver`` (its arrival to the end of the page's render), ``frame_wait`` (the render to
the next frame's start) and ``frame_work`` (that frame's style, layout and paint; ``frame`` is
both), and the renders the page made while the move was on its way (``renders_between``, their
script time ``render_between_ms``). The server's side of each move comes from the canasta
process itself, run through ``scripts/timed_play.py`` (its timing hooks: a few microseconds a
step; ``--no-server-timing`` runs it plainly): the move's handling, the way to the host, the
host's check, durable log and answer, the seat's checks, the push, and the garbage collector's
pauses meanwhile. The load averages before and after are printed: the figures are only
comparable at a like load. ``--json`` also lists each click (``per_click_ms``) and each move's
server legs (``server_ms.per_move``), in order: where the slow ones lost their time.

The driver waits for the page by polling it every 20 ms (``--polling raf``: in every animation
frame, Playwright's default and this benchmark's method before: it kept the page drawing a frame
every 16 ms while the move was on its way, which a person's page does not).

    PYTHONPATH=. python scripts/bench_web.py [--clicks 60] [--variant classic-2p] [--delay 0.3]
        [--polling 20|raf] [--no-server-timing] [--timeline FILE] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import web_driver
from timed_play import percentiles, summarize
from web_driver import (
    PlayProcess,
    browser,
    play_a_move,
    playwright_missing,
    version,
    wait_for_change,
    wait_for_turn,
)

HERE = Path(__file__).resolve().parent

# The driver's waits poll the page every this many milliseconds (not in every animation frame,
# Playwright's default: that kept the page drawing frames, and its main thread busy, while the
# move timed was on its way; a person's page is idle then). ``--polling raf`` measures as before.
POLL_MS = 20.0

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
  const bench = { samples: [], renders: [], posts: [], parts: [], t0: null, hand: null,
    between: 0, betweenMs: 0 };
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
      bench.between = 0;
      bench.betweenMs = 0;
    }
  }, true);
  new MutationObserver(() => {
    if (bench.t0 === null) return;
    if (document.body.dataset.hand === bench.hand) {
      // a render while the move is on its way (the page's main thread, taken from the answer)
      bench.between += 1;
      bench.betweenMs += parseFloat(document.body.dataset.renderMs);
      return;
    }
    const t0 = bench.t0;
    const rendered = performance.now();
    const between = bench.between;
    const betweenMs = bench.betweenMs;
    bench.t0 = null;
    bench.renders.push(parseFloat(document.body.dataset.renderMs));
    // the snapshot drawn: the last to arrive before this render
    const arrived = window.__arrivals.filter((t) => t <= rendered).pop();
    const posted = bench.posted;
    // the frame's own style, layout and paint run after its animation callbacks, in the same
    // task: a message posted from one arrives once they are done
    requestAnimationFrame(() => {
      const framed = performance.now();
      const painted = new MessageChannel();
      painted.port1.onmessage = () => {
        const now = performance.now();
        bench.samples.push(now - t0);
        bench.parts.push({
          post: posted !== undefined && posted >= t0 ? posted - t0 : null,
          snapshot: arrived !== undefined && arrived >= t0 ? arrived - t0 : null,
          deliver: arrived !== undefined && arrived >= t0 ? rendered - arrived : null,
          frame: now - rendered,
          frame_wait: framed - rendered,
          frame_work: now - framed,
          renders_between: between,
          render_between_ms: betweenMs,
        });
      };
      painted.port2.postMessage(null);
    });
  }).observe(document.body, { attributes: true, attributeFilter: ["data-hand", "data-version"] });
}
"""


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def measure(
    clicks: int,
    variant: str,
    delay: float = 0.3,
    server_timing: bool = True,
    polling: str | float = POLL_MS,
    keep_timeline: Path | None = None,
) -> dict[str, Any]:
    web_driver.POLLING = polling
    loads = [os.getloadavg()]
    with tempfile.TemporaryDirectory() as tmp:
        timeline = Path(tmp) / "timeline.json"
        launcher = [str(HERE / "timed_play.py"), str(timeline)] if server_timing else None
        play = PlayProcess(
            Path(tmp),
            *("--variant", variant, "--hands", "20", "--delay", f"{delay:g}", "--name", "bench"),
            launcher=launcher,
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
        loads.append(os.getloadavg())
        server = summarize(json.loads(timeline.read_text())) if timeline.exists() else None
        if keep_timeline is not None and timeline.exists():
            keep_timeline.write_bytes(timeline.read_bytes())
    samples = samples[:clicks]
    if not samples:
        raise SystemExit("no click was measured")
    renders = [float(r) for r in measured["renders"]][:clicks]
    posts = [float(p) for p in measured["posts"]]
    parts = measured["parts"][:clicks]

    def part(name: str) -> dict[str, float] | None:
        return percentiles([float(p[name]) for p in parts if p.get(name) is not None])

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
        # the page's legs: the click to the POST's answer and to the changing snapshot's arrival;
        # its arrival to its render; the render to the frame (the wait for it, then its style,
        # layout and paint); renders while the move was on its way, and their script time
        "parts_ms": {
            name: part(name)
            for name in (
                "post",
                "snapshot",
                "deliver",
                "frame",
                "frame_wait",
                "frame_work",
                "renders_between",
                "render_between_ms",
            )
        },
        # each click as measured, in order: its whole time and its page's legs (the tail's causes)
        "per_click_ms": [
            {"ms": round(ms, 2), **{k: v if v is None else round(v, 2) for k, v in p.items()}}
            for ms, p in zip(samples, parts, strict=False)
        ],
        # the server's legs of each move (scripts/timed_play.py), its own clock
        "server_ms": server,
        "load_average": [[round(x, 2) for x in load] for load in loads],
        "driver_polling": polling,
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
    parser.add_argument(
        "--polling",
        default=str(POLL_MS),
        help=f"how the driver waits for the page: every N ms (default {POLL_MS:g}) or 'raf'",
    )
    parser.add_argument(
        "--timeline", type=Path, help="keep the server's timeline (scripts/timed_play.py) here"
    )
    parser.add_argument(
        "--no-server-timing",
        action="store_true",
        help="run canasta itself, not through scripts/timed_play.py (no server legs)",
    )
    args = parser.parse_args()
    missing = playwright_missing()
    if missing:
        raise SystemExit(missing)
    polling: str | float = args.polling if args.polling == "raf" else float(args.polling)
    result = measure(
        args.clicks, args.variant, args.delay, not args.no_server_timing, polling, args.timeline
    )
    if args.json:
        print(json.dumps(result))
        return
    print(
        f"{result['clicks']} clicks ({result['variant']}, bots at {args.delay:g} s): "
        f"p50 {result['p50_ms']} ms, p95 {result['p95_ms']} ms, mean {result['mean_ms']} ms, "
        f"max {result['max_ms']} ms (goal: p95 under {result['goal_p95_ms']} ms); "
        f"load average before {result['load_average'][0]}, after {result['load_average'][1]}"
    )

    def legs(table: dict[str, Any] | None, names: list[tuple[str, str]]) -> str:
        if not table:
            return "not measured"
        return ", ".join(
            f"{label} {table[name]['p50']}/{table[name]['p95']}"
            for name, label in names
            if table.get(name)
        )

    print(
        "  the page, p50/p95 ms: "
        + legs(
            result["parts_ms"],
            [
                ("post", "click to a POST's answer"),
                ("snapshot", "click to the snapshot's arrival"),
                ("deliver", "arrival to the render's end"),
                ("frame_wait", "then the wait for the frame"),
                ("frame_work", "the frame's style, layout and paint"),
                ("renders_between", "renders while the move was on its way"),
                ("render_between_ms", "their script time"),
            ],
        )
        + f"; the render's script p50/p95 {result['render_p50_ms']}/{result['render_p95_ms']}"
    )
    print(
        "  the server (the canasta process), p50/p95 ms: "
        + legs(
            result["server_ms"],
            [
                ("server", "the move's arrival to the snapshot written"),
                ("post", "the move's handling (the seat signs and sends)"),
                ("to_host", "to the host"),
                ("host", "the host's check, log and answer"),
                ("log_sync", "of which the log's sync"),
                ("seat", "the seat's checks to the push"),
                ("push", "the push"),
                ("pushes", "snapshots pushed per move"),
                ("gc", "the garbage collector's pauses"),
            ],
        )
    )


if __name__ == "__main__":
    main()
