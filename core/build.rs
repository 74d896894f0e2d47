//! Turns two environment variables into cfgs, so that switching mutants or parkers recompiles
//! only `berth` and never its dependencies (RUSTFLAGS stay identical across runs):
//!
//! - `BERTH_MUTANT=name` sets `--cfg berth_mutant="name"` (see `mutants/manifest.toml`);
//! - `BERTH_PARKER=condvar` sets `--cfg berth_parker="condvar"`.
//!
//! Passing the cfgs in RUSTFLAGS directly works too.

use std::env;

fn main() {
    println!("cargo:rerun-if-env-changed=BERTH_MUTANT");
    println!("cargo:rerun-if-env-changed=BERTH_PARKER");
    println!("cargo:rerun-if-changed=build.rs");
    if let Some(m) = env::var("BERTH_MUTANT").ok().filter(|m| !m.is_empty()) {
        assert!(
            m.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
            "BERTH_MUTANT must be a mutant name from mutants/manifest.toml, got {m:?}"
        );
        println!("cargo:rustc-cfg=berth_mutant=\"{m}\"");
    }
    match env::var("BERTH_PARKER").ok().as_deref() {
        None | Some("") => {}
        Some(p @ ("futex" | "condvar")) => println!("cargo:rustc-cfg=berth_parker=\"{p}\""),
        Some(other) => panic!("BERTH_PARKER must be `futex` or `condvar`, got {other:?}"),
    }
}
