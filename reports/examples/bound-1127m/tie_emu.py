# Session m: the parked sample of fused_stream_resample at K = 256 (phase 0: every 10th warp step, P = 5 K / 128) emulated on
# the suite's ties / plateau / random rows: how many of the sample's top 64 hold the 64th's value, how many sample elements
# are above it and equal to it (20 rows each; bf16 by round-to-nearest-even). Output: tie_emu.txt.
import numpy as np
rng=np.random.default_rng(1)
def sample_idx(V, W, P=10):
    step=32*W; nfull=V//step
    idx=np.concatenate([np.arange(s*step,(s+1)*step) for s in range(0,nfull,P)])
    return idx
for V in (50257,151936):
  for W,name in ((4,'fp32'),(8,'bf16')):
    for kind in ('ties','plateau','random'):
      fr=[]
      for row in range(20):
        n=rng.standard_normal(V)
        if kind=='ties': x=np.floor(2*n)*0.5
        elif kind=='plateau':
          per=V//40; x=np.where(np.arange(V)%per==7%per,3.0,1.0)
        else: x=n
        if name=='bf16': x=x.astype(np.float32).view(np.uint32); x=((x+0x7FFF+((x>>16)&1))&0xFFFF0000).view(np.float32)
        s=sample_idx(V,W); xs=x[s]
        order=np.lexsort((s,-xs)); top=xs[order[:64]]
        v=top[-1]; fr.append(((top==v).sum(), (xs>v).sum(), (xs==v).sum()))
      a=np.array(fr)
      print(V,name,kind,'n_at_thr(top64) med',np.median(a[:,0]),'max',a[:,0].max(),' sample above',np.median(a[:,1]),' sample equal',np.median(a[:,2]))
