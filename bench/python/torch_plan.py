"""What the plan-call benchmarks share (plan_overhead.py, plan_call_pieces.py): their arguments,
and a d2xyz plan on the GPU with its PyTorch arrays, warmed up."""
import argparse
import json
import os
import sys


def parse(doc, extra=()):
    """The scripts' arguments: --size, --radius, --output and `extra` (name, type, default, help)."""
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size", type=int, default=64, help="the interior's edge, points (default 64)")
    p.add_argument("--radius", type=int, default=4, help="the stencil's radius R (default 4)")
    for name, kind, default, text in extra:
        p.add_argument(name, type=kind, default=default, help=text)
    p.add_argument("--output", help="write the figures as JSON here (default: print them)")
    return p.parse_args()


def warm_plan(a):
    """(torch, fdstencil, plan, u, out): a d2xyz plan of radius a.radius on an a.size^3 interior,
    random u and a zeroed out on the current GPU, after 100 calls (the plan built, the kernels
    loaded, the clocks up). Exits with status 2, saying why, without PyTorch, a GPU or
    fdstencil's cuda backend."""
    me = os.path.basename(sys.argv[0])
    try:
        import torch
        import fdstencil
    except ImportError as e:
        print(f"{me}: error: {e.name} is not installed for {sys.executable}", file=sys.stderr)
        sys.exit(2)
    if not torch.cuda.is_available():
        print(f"{me}: error: PyTorch sees no GPU", file=sys.stderr)
        sys.exit(2)
    try:
        plan = fdstencil.Plan("d2xyz", a.radius, (a.size,) * 3, backend="cuda")
    except ValueError as e:
        print(f"{me}: error: {e}", file=sys.stderr)
        sys.exit(2)
    u = torch.randn(plan.padded_shape, device="cuda")
    out = torch.zeros_like(u)
    for _ in range(100):
        plan(u, out)
    torch.cuda.synchronize()
    return torch, fdstencil, plan, u, out


def emit(doc, path):
    """Writes `doc` as JSON to `path` when given, and prints it."""
    text = json.dumps(doc, indent=1)
    if path:
        with open(path, "w") as f:
            f.write(text + "\n")
    print(text)
