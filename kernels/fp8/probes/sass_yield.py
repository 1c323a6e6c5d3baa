#!/usr/bin/env python3
"""Device-side experiment (issue 19, kv_a): the control bits of the FP8 GEMM's promotion FFMAs.

Usage: sass_yield.py CUBIN EXE MODE OUT_EXE REPORT

CUBIN is the sm_90a cubin of kernels/fp8/gemm_wgmma.cu (cuobjdump -xelf all on its object), EXE a
binary that embeds it uncompressed (built with --no-compress). Every run of >= 8 consecutive FFMA
instructions of every function in CUBIN (the promotions acc += scale * partial; the epilogue's scaling)
is changed by MODE:
  noreuse  clear the four operand-reuse bits (bits 122..125 of the 128-bit instruction)
  yalt     noreuse, and flip the yield bit (bit 109) on every second FFMA of the run
  yall     noreuse, and flip the yield bit on every FFMA of the run
  yreuse   on the FFMAs of the run that set a reuse bit only: clear it and flip the yield bit (the
           policy the DeepGEMM README describes; ptxas leaves such FFMAs without the bit)
Neither kind of bit changes what an instruction computes: reuse is an operand-cache hint, yield a
scheduling hint (the public DeepGEMM README describes flipping them in a kernel of this kind). The
patched .text sections replace the originals inside EXE (each must occur exactly once there); REPORT
gets the runs found and the bits before and after. Instruction words are taken from cuobjdump -sass and
checked against the section bytes before anything is written.
"""
import collections
import os
import re
import struct
import subprocess
import sys

YIELD = 1 << 45          # in the upper 64-bit word: bit 109 of the instruction
REUSE = 0xF << 58        # bits 122..125
MIN_RUN = 8


def sections(elf):
    if elf[:4] != b"\x7fELF" or elf[4] != 2:
        sys.exit("not an ELF64 file")
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    hdrs = [struct.unpack_from("<IIQQQQ", elf, shoff + i * shentsize) for i in range(shnum)]
    stroff = hdrs[shstrndx][4]
    out = {}
    for name_off, _type, _flags, _addr, off, size in hdrs:
        end = elf.index(b"\0", stroff + name_off)
        out[elf[stroff + name_off:end].decode()] = (off, size)
    return out


def parse_sass(text):
    funcs = collections.OrderedDict()
    cur, pending = None, None
    for line in text.splitlines():
        m = re.match(r"\s*Function : (\S+)", line)
        if m:
            cur = m.group(1)
            funcs[cur] = []
            continue
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*/\* (0x[0-9a-f]{16}) \*/\s*$", line)
        if m and cur:
            pending = (int(m.group(1), 16), m.group(2).strip(), int(m.group(3), 16))
            continue
        m = re.match(r"\s*/\* (0x[0-9a-f]{16}) \*/\s*$", line)
        if m and pending:
            funcs[cur].append(pending + (int(m.group(1), 16),))
            pending = None
    return funcs


def opcode(text):
    t = text.split()
    if t and t[0].startswith("@"):
        t = t[1:]
    return t[0].split(".")[0] if t else ""


def main():
    cubin_path, exe_path, mode, out_exe, report = sys.argv[1:6]
    if mode not in ("noreuse", "yalt", "yall", "yreuse"):
        sys.exit("mode must be noreuse, yalt, yall or yreuse")
    cubin = bytearray(open(cubin_path, "rb").read())
    exe = bytearray(open(exe_path, "rb").read())
    secs = sections(cubin)
    funcs = parse_sass(subprocess.run(["cuobjdump", "-sass", cubin_path], capture_output=True, text=True,
                                      check=True).stdout)
    rep = []
    total = collections.Counter()
    for name, ins in funcs.items():
        sec = secs.get(".text." + name)
        if sec is None or not ins:
            continue
        off, size = sec
        orig = bytes(cubin[off:off + size])
        for o, _t, lo, hi in ins:
            if struct.unpack_from("<QQ", cubin, off + o) != (lo, hi):
                sys.exit(f"{name}: word at {o:#x} differs from cuobjdump's")
        runs, cur = [], []
        for k, (o, t, lo, hi) in enumerate(ins):
            if opcode(t) == "FFMA":
                cur.append(k)
            else:
                if len(cur) >= MIN_RUN:
                    runs.append(cur)
                cur = []
        if len(cur) >= MIN_RUN:
            runs.append(cur)
        if not runs:
            continue
        before = collections.Counter()
        for run in runs:
            for i, k in enumerate(run):
                o, t, lo, hi = ins[k]
                before["ffma"] += 1
                before["yield_set"] += bool(hi & YIELD)
                before["reuse_any"] += bool(hi & REUSE)
                new = hi & ~REUSE
                if mode == "yreuse":
                    new = (hi & ~REUSE) ^ YIELD if hi & REUSE else hi
                elif mode == "yall" or (mode == "yalt" and i % 2 == 1):
                    new ^= YIELD
                before["changed"] += new != hi
                struct.pack_into("<Q", cubin, off + o + 8, new)
        patched = bytes(cubin[off:off + size])
        n = exe.count(orig)
        if n != 1:
            sys.exit(f"{name}: its .text occurs {n} times in {exe_path} (compressed fatbin?)")
        at = exe.find(orig)
        exe[at:at + size] = patched
        total.update(before)
        total["functions"] += 1
        total["runs"] += len(runs)
        rep.append(f"{name}: {len(ins)} instructions, {len(runs)} FFMA runs (lengths "
                   f"{sorted(collections.Counter(len(r) for r in runs).items())}), {dict(before)}")
    if not total["functions"]:
        sys.exit(f"no FFMA runs found in {cubin_path} ({len(funcs)} functions parsed)")
    open(out_exe, "wb").write(exe)
    os.chmod(out_exe, 0o755)
    summary = f"mode {mode}: {dict(total)}"
    open(report, "w").write("\n".join(rep + [summary]) + "\n")
    print(summary)


if __name__ == "__main__":
    main()
