//! Criterion benchmarks of the activation family — every activation with a full-length and a
//! broadcast row bias, f32 and f16 — each dtype next to its device copy of the same length
//! (the ceiling), measured in the same process. The cases are [`cubeport_cli::cases::activation_cases`]
//! (shared with `cubeport bench`); each was checked against the f64 reference when it was built.
//!
//! ```text
//! cargo bench --bench activation                       # every backend with a device
//! CUBEPORT_BACKEND=cuda cargo bench --bench activation -- 'activation/bias_gelu'
//! CUBEPORT_BENCH_QUICK=1 cargo bench --bench activation    # 1 M elements (lavapipe)
//! ```
//! Ids: `<family>/<op>_<bias>/<backend>/<dtype>` (`copy/vec/…` for the anchor) with the element
//! count as the parameter. Throughput is decimal bytes moved (input and bias read once, output
//! written once).

use criterion::{Criterion, criterion_group, criterion_main};
use cubeport::BackendKind;
use cubeport::cubecl::prelude::*;

mod common;
use common::{Count, bench_cases};

struct Visit<'a>(&'a mut Criterion);

impl cubeport::testing::BackendVisitor for Visit<'_> {
    fn visit<R: Runtime>(&mut self, client: ComputeClient<R>, kind: BackendKind) {
        let cases = cubeport_cli::cases::activation_cases(&client, common::scale())
            .unwrap_or_else(|e| panic!("activation cases on {kind}: {e}"));
        bench_cases(self.0, &client, kind, Count::Bytes, cases);
    }
}

fn benches(c: &mut Criterion) {
    cubeport::testing::visit_backends("bench activation", None, &mut Visit(c));
}

criterion_group!(activation, benches);
criterion_main!(activation);
