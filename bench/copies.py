"""N transcripts for a throwaway project: copies of the shipped ones spread over the shipped
suites, every transcript file under each suite's folder, subfolders included (`time/recorded/`:
the recorded runs, each beside its `<id>.label.yaml`, which is no transcript but goes with it).

Usage: python3 bench/copies.py PROJECT N   (from the repository's root)
"""
import os
import shutil
import sys

project, n = sys.argv[1], int(sys.argv[2])
src = []
for suite in sorted(os.listdir("transcripts")):
    for d, _, files in sorted(os.walk(f"transcripts/{suite}")):
        sub = os.path.relpath(d, f"transcripts/{suite}")
        src += [(suite, sub, f) for f in sorted(files) if not f.endswith(".label.yaml")]
for i in range(n):
    suite, sub, f = src[i % len(src)]
    d = os.path.normpath(f"{project}/transcripts/{suite}/{sub}")
    os.makedirs(d, exist_ok=True)
    shutil.copy(f"transcripts/{suite}/{sub}/{f}", f"{d}/{i:05d}-{f}")
    label = f"transcripts/{suite}/{sub}/" + f.rsplit(".", 1)[0] + ".label.yaml"
    if os.path.exists(label):
        shutil.copy(label, f"{d}/{i:05d}-" + os.path.basename(label))
