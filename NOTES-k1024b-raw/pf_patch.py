import sys
src, dst, dist = sys.argv[1], sys.argv[2], int(sys.argv[3])
s = open(src).read()
old = '''        for (; i + U <= n; i += U, p += U * jump, idx += U * jump * W) {
            vec16<T> v[U];
#pragma unroll
            for (int u = 0; u < U; ++u) v[u] = p[u * jump];
'''
assert s.count(old) == 1
new = old + f'''#pragma unroll
            for (int u = 0; u < U; ++u)
                if (i + {dist} * U + u < n) asm volatile("prefetch.global.L2 [%0];" ::"l"(p + ({dist} * U + u) * jump));
'''
s = s.replace(old, new)
open(dst, 'w').write(s)
