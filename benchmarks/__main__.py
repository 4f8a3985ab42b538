"""Run every benchmark module (or those named on the command line) and print one table."""

import importlib
import pkgutil
import sys
from pathlib import Path


def main(names):
    modules = sorted(m.name for m in pkgutil.iter_modules([str(Path(__file__).parent)])
                     if m.name.startswith("bench_"))
    if names:
        unknown = sorted(set(names) - set(modules))
        if unknown:
            sys.exit(f"unknown benchmark(s) {', '.join(unknown)}; expected some of {', '.join(modules)}")
        modules = [m for m in modules if m in names]
    header = f"{'benchmark':<62} {'value':>12} {'unit':<16} {'target':<10} note"
    print(header)
    print("-" * len(header))
    for name in modules:
        for row in importlib.import_module(f"benchmarks.{name}").rows():
            print(f"{row.name:<62} {row.value:>12.4g} {row.unit:<16} {row.target:<10} {row.note}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
