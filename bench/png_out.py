"""The bench figures' ends, shared by plot_wave.py and plot_sweep.py: a check that the output's
folder takes a file, made before any input is read; Matplotlib's headless pyplot, or a message
naming the interpreter that lacks it; and a figure saved under a temporary name and renamed into
place, so that a failed write leaves nothing half-written under the final name."""
import os
import sys


def folder_problem(output):
    """Why output cannot be written (its folder missing or read-only), or None."""
    folder = os.path.dirname(os.path.abspath(output))
    if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
        return f"{output}: its folder {folder} does not exist or is not writable"
    return None


def pyplot(tool):
    """matplotlib.pyplot on the Agg backend, or None after saying which interpreter lacks it."""
    try:
        import matplotlib
    except ImportError:
        print(f"{tool}: error: matplotlib is not installed for " + sys.executable, file=sys.stderr)
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def save(fig, output, dpi, tool):
    """Writes fig to output (PNG) through a temporary file; the exit status: 0, or 1 on failure."""
    fig.tight_layout()
    tmp = output + ".tmp.png"
    try:
        fig.savefig(tmp, dpi=dpi)
        os.replace(tmp, output)  # nothing half-written under the final name
    except OSError as e:
        print(f"{tool}: error: cannot write {output}: {e}", file=sys.stderr)
        if os.path.exists(tmp):
            os.remove(tmp)
        return 1
    print(output)
    return 0
