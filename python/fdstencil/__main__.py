"""python -m fdstencil info [--json]: the tool's `info`."""
import sys

from . import _core


def main(argv):
    if len(argv) < 1 or argv[0] in ("-h", "--help") or argv[0] != "info":
        print("usage: python -m fdstencil info [--json]\n\nPrints the version, the build (CUDA, OpenMP), "
              "the backends and the GPUs, as `fdstencil info` does.", file=sys.stderr if argv[:1] not in (
                  ["-h"], ["--help"]) else sys.stdout)
        return 0 if argv[:1] in (["-h"], ["--help"]) else 2
    sys.stdout.flush()
    return _core.info(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
