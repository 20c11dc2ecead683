//! Criterion benchmarks of attention forward: [`cubeport_cli::cases::attention_cases`] (shared
//! with `cubeport bench`), B4 H32 S4096 at D 128 and 64, f16 and bf16, causal and not, the
//! automatic variant and the SIMT kernel forced once per shape; each checked on sampled rows
//! against f64 before it is timed. The PyTorch anchors (SDPA's flash, cuDNN and mem-efficient
//! backends) come from `anchors_beyond.py` in the same device call.
//!
//! ```text
//! cargo bench --bench attention
//! CUBEPORT_BACKEND=cuda cargo bench --bench attention -- 'attention/auto'
//! CUBEPORT_BENCH_QUICK=1 cargo bench --bench attention     # B1 H2 S256 D64 (lavapipe)
//! ```
//! Ids: `attention/[causal_]<variant>/<backend>/<dtype>/B…H…S…D…`; throughput in FLOPs (read
//! `Gelem/s` as GFLOP/s), `4·B·H·S²·D`, halved when causal.

use criterion::{Criterion, criterion_group, criterion_main};
use cubeport::BackendKind;
use cubeport::cubecl::prelude::*;

mod common;
use common::{Count, bench_cases};

struct Visit<'a>(&'a mut Criterion);

impl cubeport::testing::BackendVisitor for Visit<'_> {
    fn visit<R: Runtime>(&mut self, client: ComputeClient<R>, kind: BackendKind) {
        // `CUBEPORT_ATTENTION_SHAPES=4x32x4096x64,…` (B×H×S×D) and `CUBEPORT_BENCH_DTYPES`
        // narrow what is built (every case is built and checked before any is timed).
        let shapes: Vec<(usize, usize, usize, usize)> =
            common::dims_from_env("CUBEPORT_ATTENTION_SHAPES", 4)
                .map(|v| v.into_iter().map(|d| (d[0], d[1], d[2], d[3])).collect())
                .unwrap_or_else(|| cubeport_cli::cases::attention_shapes(common::scale()).to_vec());
        let dtypes: Vec<cubeport::DType> = common::dtypes_from_env()
            .into_iter()
            .filter(|d| *d != cubeport::DType::F32)
            .collect();
        let cases = cubeport_cli::cases::attention_cases_for(&client, &dtypes, &shapes)
            .unwrap_or_else(|e| panic!("attention cases on {kind}: {e}"));
        bench_cases(self.0, &client, kind, Count::Flops, cases);
    }
}

fn benches(c: &mut Criterion) {
    cubeport::testing::visit_backends("bench attention", None, &mut Visit(c));
}

criterion_group!(attention, benches);
criterion_main!(attention);
