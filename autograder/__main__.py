"""Command line of the course tools: `python -m autograder {build,grade,check,report} ...`."""

import argparse
import sys


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m autograder", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p_build = sub.add_parser("build", help="generate notebooks/ and solutions/ from autograder/source/")
    p_build.add_argument("--check", action="store_true",
                         help="write nothing; fail if the committed files differ from a fresh build")
    p_build.add_argument("assignments", nargs="*", help="assignment ids (default: all)")
    p_lab = sub.add_parser("lab", help="open the course in JupyterLab (127.0.0.1, with a token)")
    p_lab.add_argument("--instructor", action="store_true",
                       help="the instructor's JupyterLab: nbgrader's formgrader on the course in autograder/")
    p_lab.add_argument("--port", type=int, help="port to listen on (default: 8888 or the next free one)")
    p_lab.add_argument("--no-browser", action="store_true", help="print the URL instead of opening a browser")
    p_lab.add_argument("--allow-root", action="store_true", help="run even as root (containers)")
    args = parser.parse_args(argv)
    if args.command == "lab":
        from . import lab

        return lab.main(args.instructor, args.port, not args.no_browser, args.allow_root)
    if args.command == "build":
        from . import build

        return build.main(check=args.check, only=args.assignments or None)
    return 2


if __name__ == "__main__":
    sys.exit(main())
