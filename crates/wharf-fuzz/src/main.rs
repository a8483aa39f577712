//! `wharf-fuzz`: runs the differential fuzz targets for a while and reports what they found.
//!
//! `wharf-fuzz [--seconds N | --cases N] [--seed N] [--save DIR] [TARGET...]`: the time (or
//! the number of cases) is shared evenly among the targets named (all by default). Saved
//! cases are replayed first. Every disagreement is written to DIR (`target/fuzz-findings`)
//! and printed; the exit status is 1 when there was any.
//!
//! The fuzzing hooks of `wharf-server` exist only when built with `--cfg fuzzing`
//! (`RUSTFLAGS="--cfg fuzzing"`, which `scripts/fuzz` sets); without them this command only
//! says so.

#[cfg(fuzzing)]
mod command;

#[cfg(fuzzing)]
fn main() -> std::process::ExitCode {
    command::main()
}

#[cfg(not(fuzzing))]
fn main() -> std::process::ExitCode {
    eprintln!(
        "wharf-fuzz needs wharf-server's fuzzing hooks: build it with RUSTFLAGS=\"--cfg fuzzing\" (scripts/fuzz does)"
    );
    std::process::ExitCode::from(2)
}
