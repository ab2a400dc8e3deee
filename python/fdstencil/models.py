"""Synthetic velocity models for imaging and inversion tests and demonstrations (issue 37).

    import fdstencil.models as fm
    v = fm.faulted()                 # (300, 1000) float32, m/s, 10 m spacing
    v0 = fm.smoothed(v, 12.0)        # a smooth starting model
"""
import numpy as np

# The faulted model's layers: the velocity below each interface (m/s), the interfaces' depths at
# x = 0 (m) and their dip (m of depth per m of x). The body and the fault are faulted()'s.
LAYER_VELOCITIES = (1800.0, 2200.0, 2650.0, 3100.0, 3600.0)
INTERFACE_DEPTHS = (550.0, 1150.0, 1800.0, 2400.0)
DIP = 0.03


def interface_depths(x, throw=200.0, fault_x=4000.0, fault_dip=1.0):
    """The depths (m) of the faulted model's interfaces at horizontal positions x (m): an array
    (interfaces, len(x)). East of the fault (x > fault_x + fault_dip z) the layers lie `throw`
    deeper; the fault cuts each interface where it crosses it."""
    x = np.asarray(x, np.float64)
    depths = []
    for z0 in INTERFACE_DEPTHS:
        z = z0 + DIP * x
        # The hanging wall's interface is z + throw where that point lies east of the fault plane.
        down = z + throw
        depths.append(np.where(x > fault_x + fault_dip * down, down, z))
    return np.array(depths)


def faulted(nz=300, nx=1000, spacing=10.0, throw=200.0, body_velocity=4200.0):
    """A 2D model (nz, nx) float32 in m/s on a grid of `spacing` m: five layers dipping gently, cut
    by a normal fault dipping at 45 degrees that drops the eastern block by `throw` m, and an
    elliptic high-velocity body (body_velocity) in the third layer, west of the fault."""
    z = np.arange(nz)[:, None] * spacing
    x = np.arange(nx)[None, :] * spacing
    v = np.full((nz, nx), LAYER_VELOCITIES[0])
    for depth, velocity in zip(interface_depths(x[0], throw), LAYER_VELOCITIES[1:]):
        v[z >= depth[None, :]] = velocity
    width = nx * spacing
    body = ((x - 0.25 * width) / (0.06 * width)) ** 2 + ((z - 0.5 * nz * spacing) / (0.08 * nz * spacing)) ** 2 <= 1
    v[body] = body_velocity
    return v.astype(np.float32)


def smoothed(v, sigma):
    """v smoothed in slowness by a Gaussian of `sigma` points along each axis (edges extended): a
    starting model whose traveltimes are close to v's and whose interfaces are gone."""
    s = 1.0 / np.asarray(v, np.float64)
    r = int(np.ceil(3 * sigma))
    k = np.exp(-0.5 * (np.arange(-r, r + 1) / sigma) ** 2)
    k /= k.sum()
    for axis in range(s.ndim):
        pad = [(0, 0)] * s.ndim
        pad[axis] = (r, r)
        p = np.pad(s, pad, mode="edge")
        s = np.apply_along_axis(lambda line: np.convolve(line, k, mode="valid"), axis, p)
    return (1.0 / s).astype(np.float32)
