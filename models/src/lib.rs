//! loom and shuttle models of berth. The models are the tests in `tests/`; they compile to
//! nothing unless the crate is built with `--cfg loom` (`make loom`) or `--cfg shuttle`.
