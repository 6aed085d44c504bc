#!/usr/bin/env bash
# Executes the notebooks headless with Debian's Jupyter (jupyter-nbconvert). They name the standard
# kernel, python3; here its spec is pinned to Debian's /usr/bin/python3 (a private JUPYTER_PATH),
# whatever python3 comes first on the PATH. Executed copies and their figures go to
# BUILD/notebooks/. Exit 77 (CTest: skipped) when Debian's Jupyter is missing.
#   notebooks/run.sh [BUILD_DIR]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
if [ ! -x /usr/bin/jupyter-nbconvert ] || ! /usr/bin/python3 -c "import ipykernel, matplotlib, numpy" 2>/dev/null; then
  echo "notebooks: Debian's jupyter-nbconvert, python3-ipykernel, python3-matplotlib or python3-numpy is missing (scripts/setup.sh installs them): skipped"
  exit 77
fi
out="$build/notebooks"
mkdir -p "$out/jupyter/kernels/python3"
cat > "$out/jupyter/kernels/python3/kernel.json" <<'JSON'
{"argv": ["/usr/bin/python3", "-m", "ipykernel_launcher", "-f", "{connection_file}"],
 "display_name": "Python 3 (Debian /usr/bin/python3)", "language": "python"}
JSON
export JUPYTER_PATH="$out/jupyter" JUPYTER_DATA_DIR="$out/jupyter" JUPYTER_RUNTIME_DIR="$out/runtime" \
       JUPYTER_CONFIG_DIR="$out/config" IPYTHONDIR="$out/ipython" MPLCONFIGDIR="$out/mpl" \
       CTWIN_ROOT="$root" CTWIN_BIN="$build/ctwin" PYTHONNOUSERSITE=1 PYDEVD_DISABLE_FILE_VALIDATION=1
for notebook in "$root"/notebooks/*.ipynb; do
  name="$(basename "$notebook" .ipynb)"
  rm -rf "${out:?}/$name" && mkdir -p "$out/$name"
  echo "notebooks: executing $name"
  CTWIN_NOTEBOOK_OUT="$out/$name" /usr/bin/jupyter-nbconvert --to notebook --execute \
    --ExecutePreprocessor.timeout=600 \
    --output-dir "$out" --output "$name.executed" "$notebook"
  # Every figure a cell shows is in the executed copy, inline (a PNG output), not only on disk.
  /usr/bin/python3 - "$notebook" "$out/$name.executed.ipynb" <<'PY'
import json, sys
source, executed = (json.load(open(p)) for p in sys.argv[1:])
shown = sum("".join(c["source"]).count("plt.show()") for c in source["cells"] if c["cell_type"] == "code")
inline = sum("image/png" in o.get("data", {}) for c in executed["cells"] for o in c.get("outputs", []))
ids = [c.get("id") for c in executed["cells"]]
assert shown > 0 and inline >= shown, f"{sys.argv[2]}: {inline} inline figures, {shown} shown"
assert all(ids) and len(set(ids)) == len(ids), f"{sys.argv[2]}: cells without unique ids"
print(f"notebooks: {inline} figures inline")
PY
done
echo "notebooks: all executed; copies and figures in $out"
