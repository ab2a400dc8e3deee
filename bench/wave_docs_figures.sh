#!/usr/bin/env bash
# The 2D pictures of docs/wave.md (Pictures): a model, one CPU run, three plots. ~6 s of solver.
# Run from the repository root after scripts/build.sh; FD names the tool (default build/fdstencil).
set -euo pipefail
FD=${FD:-build/fdstencil}
mkdir -p /tmp/wavefig
python3 - <<'PY'
import numpy as np
nz, nx, h = 201, 401, 5.0
z = np.arange(nz)[:, None] * h
x = np.arange(nx)[None, :] * h
v = np.where(z < 120, 1500.0, 1800.0 + 0.8 * (z - 120))                       # water, then a gradient
v = np.where(z >= 450 + 0.15 * (x - 1000), 2600.0, v)                          # a dipping interface
v = np.where(((z - 720) / 90) ** 2 + ((x - 1300) / 300) ** 2 <= 1, 3500.0, v)  # a fast lens
v = np.where(z >= 880, 3000.0, v)                                              # the basement
np.save("/tmp/wavefig/model2d.npy", v.astype(np.float32))
PY

# 2. One shot: a 15 Hz Ricker at 20 m depth, 201 receivers at 10 m depth every 10 m, 1.2 s, a
#    snapshot at step 700 (t = 0.444 s); the 20-point CPML the committed figures were drawn with
#    (the default before issue 35 made it 10).
"$FD" wave --model /tmp/wavefig/model2d.npy --spacing 5 --time 1.2 --cpml 20 \
  --source 20,700 --ricker 15 --receiver-line 10,0:10,2000:201 --snapshot-steps 700 --output /tmp/wavefig/run

# 3. The pictures.
python3 bench/plot_wave.py gather /tmp/wavefig/run --gain tpow --output docs/figures/wave_gather_2d.png
python3 bench/plot_wave.py snapshot /tmp/wavefig/run --step 700 --clip 99.5 \
  --output docs/figures/wave_snapshot_model_2d.png
python3 bench/plot_wave.py model /tmp/wavefig/model2d.npy --spacing 5 --output docs/figures/wave_model_2d.png
