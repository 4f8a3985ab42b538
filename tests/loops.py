"""asyncio.run for the tests, in a thread of its own.

The browser tests' Playwright (its sync API, one per session: tests/conftest.py's `browser`) keeps its event loop
marked as running in the worker's main thread for the rest of the session, and asyncio.run refuses to start a loop
there ("cannot be called from a running event loop"). Which tests share a worker is xdist's choice, so a test that
runs a coroutine runs it where no loop can be: a thread of its own.
"""

import asyncio
import concurrent.futures


def run(coroutine):
    """asyncio.run(coroutine) in a new thread; its result, or its exception raised here."""
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="asyncio-run") as pool:
        return pool.submit(asyncio.run, coroutine).result()
