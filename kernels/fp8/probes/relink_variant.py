#!/usr/bin/env python3
"""A/B builds for kernels/fp8/NOTES.md run 13 (the switches of gemm_wgmma.cu measured in the suite on
one board). Builds one variant of the fusebench binaries: gemm_wgmma.cu recompiled with extra defines into
<vardir>/gemm_wgmma.cu.o (the base build's own compile command, only -o and -D changed), the base
build's kernel archive copied into <vardir> with that member replaced, and fusebench /
fusebench_tests relinked there with the base build's link commands (only the archive and -o
changed). No ninja runs on <vardir>, so nothing can rebuild it from another source.
usage: relink_variant.py BASE_BUILD VARDIR [-DNAME=V ...]   (BASE_BUILD: a Ninja build of fusebench and
fusebench_tests, e.g. FUSEBENCH_TARGETS="fusebench fusebench_tests" scripts/build.sh)"""
import json, os, shlex, subprocess, sys, hashlib

base, var, defs = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), sys.argv[3:]
os.makedirs(var, exist_ok=True)
cc = json.load(open(os.path.join(base, "compile_commands.json")))
e = [x for x in cc if x["file"].endswith("kernels/fp8/gemm_wgmma.cu")]
assert len(e) == 1, e
args = shlex.split(e[0]["command"])
i = args.index("-o")
obj = os.path.join(var, "gemm_wgmma.cu.o")
args[i + 1] = obj
args = args[:1] + defs + args[1:]
subprocess.run(args, cwd=e[0]["directory"], check=True)
lib = os.path.join(var, "libfusebench_kernels.a")
subprocess.run(["cp", os.path.join(base, "libfusebench_kernels.a"), lib], check=True)
members = subprocess.run(["ar", "t", lib], capture_output=True, text=True, check=True).stdout.split()
assert members.count("gemm_wgmma.cu.o") == 1, members
subprocess.run(["ar", "r", lib, obj], check=True)
m1 = hashlib.md5(open(obj, "rb").read()).hexdigest()
m2 = hashlib.md5(subprocess.run(["ar", "p", lib, "gemm_wgmma.cu.o"], capture_output=True, check=True).stdout).hexdigest()
assert m1 == m2, (m1, m2)
for tgt in ("fusebench", "fusebench_tests"):
    cmds = subprocess.run(["ninja", "-C", base, "-t", "commands", tgt], capture_output=True, text=True, check=True).stdout.splitlines()
    link = cmds[-1]
    toks = link.split(" ")
    assert toks.count("libfusebench_kernels.a") == 1 and toks.count("-o") == 1, link
    toks[toks.index("libfusebench_kernels.a")] = lib
    toks[toks.index("-o") + 1] = os.path.join(var, tgt)
    subprocess.run(" ".join(toks), shell=True, cwd=base, check=True)
print(f"{os.path.basename(var)}: defines {defs or ['(none)']} gemm_wgmma.cu.o md5 {m1} (archive member {m2})")
