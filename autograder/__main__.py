"""Command line of the course tools: `python -m autograder {build,grade,check,report} ...`."""

import argparse
import sys


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m autograder", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p_build = sub.add_parser("build", help="generate notebooks/ and solutions/ from autograder/source/")
    p_build.add_argument("--check", action="store_true",
                         help="write nothing; fail if the committed files differ from a fresh build")
    args = parser.parse_args(argv)
    if args.command == "build":
        from . import build

        return build.main(check=args.check)
    return 2


if __name__ == "__main__":
    sys.exit(main())
