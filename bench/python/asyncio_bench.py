#!/usr/bin/env python3
"""Workloads 1-6 of bench/README.md on Python's asyncio, and on uvloop when it is
installed: what the readers of the seed articles would reach for.

    python3 bench/python/asyncio_bench.py            # full sizes, 5 runs each
    python3 bench/python/asyncio_bench.py --quick    # smaller, 3 runs: a check

The table has the same rows, ids and number format as the Rust harness
(`cargo bench -p bench --bench compare`). Given `--python`, that one runs
this script with `--rows --workload ID` right after each of its own
workloads and adds these columns beside tokio's.

Standard library only (uvloop is optional). Each workload runs once as a
warm-up that is thrown away, then `--runs` times; the table shows medians.
Everything talks to 127.0.0.1 only, and the echo server child process is
killed when its workload ends.
"""

import argparse
import asyncio
import datetime
import math
import os
import platform
import random
import socket
import statistics
import subprocess
import sys
import threading
import time

if sys.version_info < (3, 11):
    sys.exit("error: needs Python 3.11 or newer (asyncio.Runner)")

try:
    import uvloop
except ImportError:
    uvloop = None

# The event loops we can run, by the name their column gets.
LOOPS = {"asyncio": asyncio.new_event_loop}
if uvloop is not None:
    LOOPS["uvloop"] = uvloop.new_event_loop

MIB = 1024 * 1024
CHUNK = 64 * 1024


# --- Sizes: the same as the Rust harness's Plan::full and Plan::quick. -----

PLANS = {
    "full": dict(
        runs=5,
        spawn_tasks=100_000,
        yield_switches=1_000_000,
        sleeps=100_000,
        sleep_max=0.100,
        lateness_sleeps=10_000,
        lateness_spread=1.0,
        echo_connections=50,
        echo_round_trips=2_000,
        message_len=64,
        stream_bytes=256 * MIB,
    ),
    "quick": dict(
        runs=3,
        spawn_tasks=10_000,
        yield_switches=100_000,
        sleeps=10_000,
        sleep_max=0.100,
        lateness_sleeps=1_000,
        lateness_spread=0.200,
        echo_connections=50,
        echo_round_trips=200,
        message_len=64,
        stream_bytes=32 * MIB,
    ),
}


# --- The workloads: each runs once on a fresh loop and returns its values,
# one per metric. Each starts its clocks inside the loop, after its setup. --


class Stopwatch:
    """Wall-clock and CPU time of this thread, where the loop runs."""

    def __init__(self):
        self.wall = time.perf_counter()
        self.cpu = time.thread_time()

    def stop(self):
        return time.perf_counter() - self.wall, time.thread_time() - self.cpu


async def empty():
    pass


async def spawn_join(tasks):
    clock = Stopwatch()
    handles = [asyncio.create_task(empty()) for _ in range(tasks)]
    for handle in handles:
        await handle
    wall, _ = clock.stop()
    return [wall * 1e9 / tasks]


async def yield_times(times):
    for _ in range(times):
        await asyncio.sleep(0)


async def yield_switch(switches):
    clock = Stopwatch()
    first = asyncio.create_task(yield_times(switches // 2))
    second = asyncio.create_task(yield_times(switches // 2))
    await first
    await second
    wall, _ = clock.stop()
    return [wall * 1e9 / switches]


async def sleeps(delays, cancel_half):
    clock = Stopwatch()
    sleepers = [asyncio.create_task(asyncio.sleep(delay)) for delay in delays]
    if cancel_half:
        # One yield lets every sleeper run its first step: all are asleep,
        # their timers scheduled, when every other one is cancelled.
        await asyncio.sleep(0)
        for sleeper in sleepers[::2]:
            sleeper.cancel()
    for i, sleeper in enumerate(sleepers):
        try:
            await sleeper
        except asyncio.CancelledError:
            assert i % 2 == 0 and cancel_half, f"sleeper {i} was cancelled"
    wall, cpu = clock.stop()
    return [wall * 1e3, cpu * 1e3]


async def sleep_measured(delay):
    """Sleeps for `delay` from when it first runs, and says how late it woke
    against the real clock (uvloop's own clock is in whole milliseconds)."""
    deadline = time.monotonic() + delay
    await asyncio.sleep(delay)
    return time.monotonic() - deadline


async def lateness(delays):
    sleepers = [asyncio.create_task(sleep_measured(delay)) for delay in delays]
    late_ms = sorted([await sleeper * 1e3 for sleeper in sleepers])
    early = sum(1 for ms in late_ms if ms < 0)
    return [
        percentile(late_ms, 50),
        percentile(late_ms, 99),
        percentile(late_ms, 100),
        early,
    ]


async def echo_connection(reader, writer):
    """Writes back whatever arrives until the client hangs up."""
    try:
        while data := await reader.read(CHUNK):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        # Cancelled when the workload's loop closes. Ending quietly matters
        # on Python 3.11, whose streams log a traceback for a handler task
        # that ends cancelled.
        pass
    finally:
        writer.close()


async def start_echo_server():
    server = await asyncio.start_server(
        echo_connection, "127.0.0.1", 0, backlog=1024
    )
    return server, server.sockets[0].getsockname()[:2]


async def round_trips(reader, writer, trips, message):
    for _ in range(trips):
        writer.write(message)
        await writer.drain()
        reply = await reader.readexactly(len(message))
        if reply != message:
            raise RuntimeError("the echo changed the message")


async def echo_clients(addr, connections, trips, message_len):
    """Connects every client first, then times their round trips alone."""
    streams = [await asyncio.open_connection(*addr) for _ in range(connections)]
    message = b"x" * message_len
    clock = Stopwatch()
    clients = [
        asyncio.create_task(round_trips(reader, writer, trips, message))
        for reader, writer in streams
    ]
    for client in clients:
        await client
    wall, _ = clock.stop()
    for _, writer in streams:
        writer.close()
    return wall


async def echo(connections, trips, message_len):
    server, addr = await start_echo_server()
    async with server:
        wall = await echo_clients(addr, connections, trips, message_len)
    return [connections * trips / wall]


async def send_bytes(writer, count):
    chunk = b"\x5a" * CHUNK
    left = count
    while left > 0:
        writer.write(chunk[: min(left, CHUNK)])
        await writer.drain()
        left -= CHUNK


async def stream(count):
    server, addr = await start_echo_server()
    async with server:
        reader, writer = await asyncio.open_connection(*addr)
        clock = Stopwatch()
        sending = asyncio.create_task(send_bytes(writer, count))
        received = 0
        while received < count:
            data = await reader.read(CHUNK)
            if not data:
                raise RuntimeError("the echo hung up early")
            received += len(data)
        await sending
        wall, _ = clock.stop()
        writer.close()
    return [count / wall / 1e9]


# --- The echo server alone in a child process, as in the Rust harness: it
# prints `listening HOST:PORT`, answers `cpu` with `cpu NANOSECONDS`, and
# exits when its standard input closes. -----------------------------------


def serve_echo_child(loop_name):
    def answer_parent():
        for line in sys.stdin:
            if line.strip() == "cpu":
                print(f"cpu {time.process_time_ns()}", flush=True)
        os._exit(0)

    async def serve():
        server, (host, port) = await start_echo_server()
        print(f"listening {host}:{port}", flush=True)
        threading.Thread(target=answer_parent, daemon=True).start()
        async with server:
            await server.serve_forever()

    with asyncio.Runner(loop_factory=LOOPS[loop_name]) as runner:
        runner.run(serve())


class ServerProcess:
    """The parent's handle on the child; `kill` ends it."""

    def __init__(self, loop_name):
        self.child = subprocess.Popen(
            [sys.executable, __file__, "--serve-echo", loop_name],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            key, value = self.child.stdout.readline().split()
            assert key == "listening", key
        except (ValueError, AssertionError):
            self.kill()
            raise RuntimeError("the echo server process did not start")
        host, port = value.rsplit(":", 1)
        self.addr = (host, int(port))

    def cpu_time(self):
        self.child.stdin.write("cpu\n")
        self.child.stdin.flush()
        key, value = self.child.stdout.readline().split()
        assert key == "cpu", key
        return int(value) / 1e9

    def kill(self):
        self.child.kill()
        self.child.wait()


class Servers:
    """One echo server process per event loop, started on first use and
    kept for every round of the workload, so the warm-up round warms the
    server too; leaving the `with` kills them all."""

    def __init__(self):
        self.running = {}

    def __enter__(self):
        return self

    def get(self, loop_name):
        if loop_name not in self.running:
            self.running[loop_name] = ServerProcess(loop_name)
        return self.running[loop_name]

    def __exit__(self, *_):
        for server in self.running.values():
            server.kill()


def echo_server_process(loop_name, servers, connections, trips, message_len):
    server = servers.get(loop_name)
    before = server.cpu_time()
    wall = run_on(
        loop_name, echo_clients(server.addr, connections, trips, message_len)
    )
    server_cpu = server.cpu_time() - before
    total = connections * trips
    return [total / wall, server_cpu * 1e6 / total]


# --- Running: every workload, the loops taking turns each round. ----------


def run_on(loop_name, coroutine):
    """Runs `coroutine` on a fresh event loop of the named kind."""
    with asyncio.Runner(loop_factory=LOOPS[loop_name]) as runner:
        return runner.run(coroutine)


def workloads(plan):
    """(id, label, metrics, run) for each workload; `run(loop, servers)`
    gives one value per metric. Metrics are (id, name, aggregate); the ids and labels
    match the Rust harness's."""
    rng = random.Random(0x5EED)
    delays = [rng.random() * plan["sleep_max"] for _ in range(plan["sleeps"])]
    count = plan["lateness_sleeps"]
    spread = [plan["lateness_spread"] * i / count for i in range(1, count + 1)]
    conns, trips = plan["echo_connections"], plan["echo_round_trips"]
    size = plan["message_len"]
    sleep_label = f"{plan['sleeps']:,} sleeps of 0-{duration(plan['sleep_max'])}"
    median, worst = statistics.median, max
    return [
        (
            "spawn",
            f"1 spawn and join {plan['spawn_tasks']:,} empty tasks",
            [("ns_per_task", "ns per task", median)],
            lambda loop, _: run_on(loop, spawn_join(plan["spawn_tasks"])),
        ),
        (
            "yield",
            f"2 two tasks yield to each other {plan['yield_switches']:,} times",
            [("ns_per_switch", "ns per switch", median)],
            lambda loop, _: run_on(loop, yield_switch(plan["yield_switches"])),
        ),
        (
            "sleeps",
            f"3 {sleep_label}",
            [("wall_ms", "wall ms", median), ("cpu_ms", "CPU ms", median)],
            lambda loop, _: run_on(loop, sleeps(delays, False)),
        ),
        (
            "sleeps_half",
            f"3 {sleep_label}, half cancelled",
            [("wall_ms", "wall ms", median), ("cpu_ms", "CPU ms", median)],
            lambda loop, _: run_on(loop, sleeps(delays, True)),
        ),
        (
            "lateness",
            f"4 {count:,} sleeps spread over {duration(plan['lateness_spread'])}",
            [
                ("p50_ms", "late p50 ms", median),
                ("p99_ms", "late p99 ms", median),
                ("max_ms", "late max ms", median),
                ("early", "early wake-ups", worst),
            ],
            lambda loop, _: run_on(loop, lateness(spread)),
        ),
        (
            "echo",
            f"5 echo, {conns:,} conns × {trips:,} round trips of {size} B",
            [("round_trips_per_s", "round trips/s", median)],
            lambda loop, _: run_on(loop, echo(conns, trips, size)),
        ),
        (
            "echo_process",
            "5 the same, server in its own process",
            [
                ("round_trips_per_s", "round trips/s", median),
                (
                    "server_cpu_us_per_round_trip",
                    "server CPU µs per round trip",
                    median,
                ),
            ],
            lambda loop, servers: echo_server_process(
                loop, servers, conns, trips, size
            ),
        ),
        (
            "stream",
            f"6 one connection streams {plan['stream_bytes'] // MIB} MiB "
            "through the echo",
            [("gb_per_s", "GB/s", median)],
            lambda loop, _: run_on(loop, stream(plan["stream_bytes"])),
        ),
    ]


def measure(plan, loops, runs, only, workload):
    """Runs each workload on each loop: a warm-up round thrown away (the
    first echo run in a fresh interpreter is several times slower, for
    reasons that have nothing to do with the loop), then `runs` rounds.
    Returns table rows: (id, label, metric name, {loop: value})."""
    rows = []
    for key, label, metrics, run in workloads(plan):
        if (only and only not in key) or (workload and key != workload):
            continue
        print(label, end=" ", file=sys.stderr, flush=True)
        results = {loop: [] for loop in loops}
        with Servers() as servers:
            for round_number in range(1 + runs):
                for loop in loops:
                    values = run(loop, servers)
                    if round_number > 0:
                        results[loop].append(values)
                print(".", end="", file=sys.stderr, flush=True)
        print(file=sys.stderr)
        for m, (metric_id, name, aggregate) in enumerate(metrics):
            values = {
                loop: aggregate([run[m] for run in results[loop]]) for loop in loops
            }
            rows.append((f"{key}.{metric_id}", label, name, values))
    return rows


# --- The table: the same format as the Rust harness's. --------------------


def percentile(sorted_values, percent):
    """Nearest rank: the smallest value that `percent` % are at or below."""
    rank = math.ceil(percent / 100 * len(sorted_values))
    return sorted_values[min(max(rank, 1), len(sorted_values)) - 1]


def format_value(value):
    """Three significant digits, whole from 100 up, thousands grouped."""
    if value == 0 or not math.isfinite(value):
        return "0" if value == 0 else str(value)
    if abs(value) >= 100:
        whole = math.floor(abs(value) + 0.5)
        return f"{'-' if value < 0 else ''}{whole:,}"
    digits = math.floor(math.log10(abs(value))) + 1
    return f"{value:.{max(0, 3 - digits)}f}"


def duration(seconds):
    return f"{seconds:.1f} s" if seconds >= 1 else f"{round(seconds * 1000)} ms"


def markdown(rows, loops):
    lines = [["workload", "metric", *loops]]
    lines.append(["---"] * len(lines[0]))
    previous = None
    for _, label, name, values in rows:
        cells = ["" if label == previous else label, name]
        cells += [format_value(values[loop]) for loop in loops]
        lines.append(cells)
        previous = label
    widths = [max(len(line[c]) for line in lines) for c in range(len(lines[0]))]
    out = []
    for line in lines:
        cells = [
            cell.ljust(width, "-" if cell == "---" else " ")
            for cell, width in zip(line, widths)
        ]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def heading(plan_name, loops, runs, argv, load):
    versions = f"Python {platform.python_version()}"
    if uvloop is not None:
        versions += f", uvloop {uvloop.__version__}"
    command = " ".join(["python3", "bench/python/asyncio_bench.py", *argv])
    return (
        f"## {' beside '.join(loops)} ({plan_name} plan)\n\n"
        f"Measured {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d} "
        f"on this machine: {os.cpu_count()} CPUs, "
        f"{platform.system()} {platform.release()}, {versions}; "
        f"load average {load:.2f} when it started, "
        f"{os.getloadavg()[0]:.2f} when it ended.\n"
        f"Each value is the median of {runs} runs, after 1 warm-up run(s) "
        "thrown away; the event loops take turns within each round.\n\n"
        f"Command: `{command}`\n"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller, 3 runs")
    parser.add_argument("--runs", type=int, help="measured runs per workload")
    parser.add_argument("--only", help="only workloads whose id contains this")
    parser.add_argument("--workload", help="only the workload with this id")
    parser.add_argument("--loop", choices=["asyncio", "uvloop"], help="just one")
    parser.add_argument("--rows", action="store_true", help="rows for Rust")
    parser.add_argument("--serve-echo", metavar="LOOP", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_echo:
        return serve_echo_child(args.serve_echo)
    if args.runs is not None and args.runs < 1:
        parser.error("--runs needs a count of 1 or more")
    if uvloop is None:
        print("uvloop is not installed (pip install uvloop): asyncio only",
              file=sys.stderr)
    if args.loop == "uvloop" and uvloop is None:
        parser.error("uvloop is not installed")
    loops = [args.loop] if args.loop else list(LOOPS)
    plan_name = "quick" if args.quick else "full"
    plan = PLANS[plan_name]
    runs = args.runs or plan["runs"]
    load = os.getloadavg()[0]
    rows = measure(plan, loops, runs, args.only, args.workload)
    if args.rows:
        for row_id, _, _, values in rows:
            for loop in loops:
                print(f"row\t{loop}\t{row_id}\t{values[loop]!r}")
    else:
        print(heading(plan_name, loops, runs, sys.argv[1:], load))
        print(markdown(rows, loops))


if __name__ == "__main__":
    main()
