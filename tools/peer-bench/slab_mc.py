"""An independent check of scree's path-traced clouds, in numpy: the
radiance at the centre of `cycles_medium.py`'s view (a homogeneous slab
10..14 units up over a grey ground of albedo 0.5, the sun 50 degrees up at
azimuth 200 with irradiance 3, a black sky), by a plane-parallel Monte
Carlo written from the definitions alone: free flights drawn from the
slab's density, the two-lobe Henyey-Greenstein phase (0.75 at g 0.8,
0.25 at g -0.3), albedo 0.99, Lambertian ground, next-event estimation of
the sun, Russian roulette.

    python3 tools/peer-bench/slab_mc.py [PATHS] [DENSITY]
"""
import numpy as np, sys
rng = np.random.default_rng(1)
N = int(sys.argv[1]) if len(sys.argv) > 1 else 400000
sig = float(sys.argv[2]) if len(sys.argv) > 2 else 0.25
B, T = 10.0, 14.0
E = 3.0
el, az = np.radians(50), np.radians(200)
s = np.array([np.cos(el)*np.sin(az), np.sin(el), np.cos(el)*np.cos(az)])
lobes = [(0.8, 0.75), (-0.3, 0.25)]
def hg(g, c): return (1-g*g)/(4*np.pi*(1+g*g-2*g*c)**1.5)
def phase(c): return sum(w*hg(g, c) for g, w in lobes)
def sample_hg(wo, n):
    u0, u1, u2 = rng.random(n), rng.random(n), rng.random(n)
    g = np.where(u0 < 0.75, 0.8, -0.3)
    x = np.where(u0 < 0.75, u0/0.75, (u0-0.75)/0.25)
    ss = (1-g*g)/(1-g+2*g*x)
    cos = np.clip((1+g*g-ss*ss)/(2*g), -1, 1)
    sin = np.sqrt(1-cos*cos); phi = 2*np.pi*u1
    a = np.where(np.abs(wo[:,0:1]) > 0.9, np.array([[0,1,0]]), np.array([[1,0,0]]))
    t = np.cross(wo, a); t /= np.linalg.norm(t, axis=1, keepdims=True); b = np.cross(wo, t)
    return t*(sin*np.cos(phi))[:,None] + b*(sin*np.sin(phi))[:,None] + wo*cos[:,None]
d0 = np.array([0, -0.6, 0.8])
pos = np.tile([0.0, 30.0, 0.0], (N, 1)); d = np.tile(d0, (N, 1))
beta = np.ones(N); L = np.zeros(N); alive = np.ones(N, bool)
Tsun_slab = np.exp(-sig*(T-B)/s[1])
for it in range(200):
    idx = np.nonzero(alive)[0]
    if len(idx) == 0: break
    p, w = pos[idx], d[idx]
    # inside or outside the slab; distance to the slab's boundaries along w
    y, wy = p[:,1], w[:,1]
    inside = (y >= B-1e-9) & (y <= T+1e-9)
    # rays above the slab going down enter at T; below going up enter at B
    t_enter = np.where(inside, 0.0, np.where(y > T, np.where(wy < 0, (T-y)/np.where(wy==0,-1e-30,wy), np.inf), np.where(wy > 0, (B-y)/np.where(wy==0,1e-30,wy), np.inf)))
    esc = ~np.isfinite(t_enter)
    # rays below the slab going down hit the ground
    below_down = (y < B-1e-9) & (wy < 0)
    # handle ground hits for rays below going down
    # inside: exit distance
    pe = p + w*np.where(np.isfinite(t_enter), t_enter, 0)[:,None]
    ye = pe[:,1]
    t_exit = np.where(wy < 0, (B-ye)/np.where(wy==0,-1e-30,wy), np.where(wy > 0, (T-ye)/np.where(wy==0,1e-30,wy), np.inf))
    free = -np.log(1-rng.random(len(idx)))/sig
    coll = (~esc) & (~below_down) & (free < t_exit)
    # collision
    ci = idx[coll]
    pc = pe[coll] + w[coll]*free[coll][:,None]
    bc = beta[ci]*0.99
    ph = phase(w[coll] @ s)
    tsun = np.exp(-sig*(T-pc[:,1])/s[1])
    L[ci] += bc*ph*E*tsun
    nd = sample_hg(w[coll], len(ci))
    pos[ci] = pc; d[ci] = nd; beta[ci] = bc
    # not collided and inside/entering: passes through; down -> ground, up -> escape
    thr = (~esc) & (~below_down) & (~coll)
    ti = idx[thr]
    pt = pe[thr] + w[thr]*np.minimum(t_exit[thr], 1e9)[:,None]
    up = w[thr][:,1] > 0
    alive[ti[up]] = False
    gi = ti[~up]; pg = pt[~up]
    pos[gi] = pg - np.array([0, 1e-6, 0]); 
    # ground: rays below slab going down, incl. those just exited downwards
    gidx = np.concatenate([gi, idx[below_down]])
    alive[idx[esc & ~below_down]] = False
    if len(gidx):
        pg = pos[gidx]; pg[:,1] = 0.0
        bg = beta[gidx]*0.5
        L[gidx] += bg/np.pi*E*s[1]*Tsun_slab*np.pi/np.pi  # albedo/pi * E cos * T
                # cosine-weighted bounce up
        u1, u2 = rng.random(len(gidx)), rng.random(len(gidx))
        r = np.sqrt(u1); phi = 2*np.pi*u2
        nd = np.stack([r*np.cos(phi), np.sqrt(1-u1), r*np.sin(phi)], 1)
        pos[gidx] = pg; d[gidx] = nd; beta[gidx] = bg
    # roulette
    idx2 = np.nonzero(alive)[0]
    q = np.minimum(beta[idx2], 1.0)
    kill = rng.random(len(idx2)) > q
    alive[idx2[kill]] = False
    beta[idx2[~kill]] /= q[~kill]
print(f"sigma {sig}: centre radiance {L.mean():.4f} +- {L.std()/np.sqrt(N):.4f}")
