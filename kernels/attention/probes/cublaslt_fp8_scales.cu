// Diagnostic: why cublasLtMatmul returns 15 for naive_fp8's scores GEMM (E4M3 TN -> fp32, fast accum,
// per-tensor scale pointers). Not part of the build: a record of the finding in kernels/attention/NOTES.md
// ("naive_fp8 and the lse policy for FP8 scores"). Build by hand on a GPU machine:
//   nvcc -O2 -arch=sm_90a cublaslt_fp8_scales.cu -lcublasLt -o probe && ./probe
#include <cublasLt.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <random>
#include <vector>

struct cfg { const char* name; bool fast; bool scales; bool heur_real_scales; cudaDataType_t dt; int min_align; int nalgo; };

int main() {
    cublasLtHandle_t h; cublasLtCreate(&h);
    printf("cublasLt %zu\n", cublasLtGetVersion());
    const int shapes[][3] = {{4096, 4096, 128}, {1008, 1000, 128}, {16, 1, 128}};
    for (auto& sh : shapes) {
        const int m = sh[0], n = sh[1], k = sh[2];
        std::mt19937 rng(1);
        std::normal_distribution<float> nd(0, 100);
        std::vector<uint8_t> ha(size_t(m) * k), hb(size_t(n) * k);
        std::vector<float> fa(ha.size()), fb(hb.size());
        for (size_t i = 0; i < ha.size(); ++i) { __nv_fp8_e4m3 x(nd(rng)); ha[i] = x.__x; fa[i] = float(x); }
        for (size_t i = 0; i < hb.size(); ++i) { __nv_fp8_e4m3 x(nd(rng)); hb[i] = x.__x; fb[i] = float(x); }
        uint8_t *a, *b; float *d, *sc; void* ws; uint16_t* d16;
        cudaMalloc(&a, ha.size()); cudaMalloc(&b, hb.size()); cudaMalloc(&d, size_t(m) * n * 4); cudaMalloc(&d16, size_t(m) * n * 2);
        cudaMalloc(&sc, 256); cudaMalloc(&ws, 32 << 20);
        cudaMemcpy(a, ha.data(), ha.size(), cudaMemcpyHostToDevice); cudaMemcpy(b, hb.data(), hb.size(), cudaMemcpyHostToDevice);
        float two[2] = {0.5f, 0.25f}; cudaMemcpy(sc, two, 8, cudaMemcpyHostToDevice);
        cfg cfgs[] = {{"as_impl", 1, 1, 0, CUDA_R_32F, 256, 1}, {"heur_real", 1, 1, 1, CUDA_R_32F, 256, 1}, {"no_fast", 0, 1, 1, CUDA_R_32F, 256, 1},
                      {"no_scales", 1, 0, 0, CUDA_R_32F, 256, 1}, {"bf16_out", 1, 1, 1, CUDA_R_16BF, 256, 1}, {"align16", 1, 1, 1, CUDA_R_32F, 16, 1},
                      {"algos8", 1, 1, 1, CUDA_R_32F, 256, 8}, {"no_fast_noscale", 0, 0, 0, CUDA_R_32F, 256, 1}};
        for (auto& c : cfgs) {
            cublasLtMatmulDesc_t desc; cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
            cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
            cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
            cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
            int8_t fast = c.fast; cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast);
            const void* pa = sc; const void* pb = sc + 1; const void* ph = sc + 32;
            if (c.scales) {
                const void* x = c.heur_real_scales ? pa : ph; const void* y = c.heur_real_scales ? pb : ph;
                cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &x, sizeof x);
                cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &y, sizeof y);
            }
            cublasLtMatrixLayout_t la, lb, ld;
            cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, k, m, k); cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, k, n, k);
            cublasLtMatrixLayoutCreate(&ld, c.dt, m, n, m);
            cublasLtMatmulPreference_t pref; cublasLtMatmulPreferenceCreate(&pref);
            size_t wsb = 32 << 20; cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsb, sizeof wsb);
            uint32_t al = c.min_align;
            for (auto at : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
                cublasLtMatmulPreferenceSetAttribute(pref, at, &al, sizeof al);
            cublasLtMatmulHeuristicResult_t res[8]; int found = 0;
            cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(h, desc, la, lb, ld, ld, pref, c.nalgo, res, &found);
            if (c.scales) {
                cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &pa, sizeof pa);
                cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &pb, sizeof pb);
            }
            printf("m%d n%d k%d %-16s heur %d found %d ws0 %zu:", m, n, k, c.name, int(hs), found, found ? res[0].workspaceSize : 0);
            float alpha = 1.f, beta = 0.f;
            void* dp = c.dt == CUDA_R_32F ? (void*)d : (void*)d16;
            int ok_algo = -1;
            for (int i = 0; i < found; ++i) {
                cublasStatus_t ms = cublasLtMatmul(h, desc, &alpha, a, la, b, lb, &beta, dp, ld, dp, ld, &res[i].algo, ws, wsb, 0);
                printf(" mm%d=%d", i, int(ms));
                if (ms == 0 && ok_algo < 0) ok_algo = i;
            }
            cudaError_t ce = cudaDeviceSynchronize();
            printf(" cuda=%d", int(ce));
            if (ok_algo >= 0 && c.dt == CUDA_R_32F) {
                cublasLtMatmul(h, desc, &alpha, a, la, b, lb, &beta, dp, ld, dp, ld, &res[ok_algo].algo, ws, wsb, 0);
                cudaDeviceSynchronize();
                std::vector<float> hd(size_t(m) * n); cudaMemcpy(hd.data(), d, hd.size() * 4, cudaMemcpyDeviceToHost);
                const double s = c.scales ? 0.5 * 0.25 : 1.0;
                double worst = 0, worst_rel_sum = 0; // |err| / sum|a||b|
                for (int j = 0; j < n; j += (n > 64 ? 7 : 1)) for (int i = 0; i < m; i += (m > 64 ? 5 : 1)) {
                    double ex = 0, sa = 0;
                    for (int x = 0; x < k; ++x) { ex += double(fa[size_t(i) * k + x]) * fb[size_t(j) * k + x]; sa += std::fabs(double(fa[size_t(i) * k + x]) * fb[size_t(j) * k + x]); }
                    const double e = std::fabs(hd[size_t(j) * m + i] - s * ex);
                    worst = std::max(worst, e); worst_rel_sum = std::max(worst_rel_sum, e / (s * sa));
                }
                printf(" max_err %.3g max_err/(s*sum|ab|) %.3g (2^%.1f)", worst, worst_rel_sum, std::log2(worst_rel_sum));
            }
            printf("\n");
            cudaGetLastError();
        }
    }
    return 0;
}
