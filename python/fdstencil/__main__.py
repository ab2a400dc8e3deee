"""python -m fdstencil info [--json]: the tool's `info`."""
import sys

from . import _core

USAGE = ("usage: python -m fdstencil info [--json]\n\n"
         "Prints the version, the build (CUDA, OpenMP), the backends and the GPUs, as `fdstencil info` does.")


def main(argv):
    if argv[:1] in (["-h"], ["--help"]):
        print(USAGE)
        return 0
    if argv[:1] != ["info"]:
        print(USAGE, file=sys.stderr)
        return 2
    sys.stdout.flush()  # Python's buffered text before the C++ printf's
    return _core.info(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
