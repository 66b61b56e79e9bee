//! The `agent-seer` command: parse, run, map the outcome to an exit code
//! (0 clean, 1 findings or failed trials, 2 usage or input error, 3 a provider or server
//! failed).

#![forbid(unsafe_code)]

mod cli;

#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOC: agent_seer::Allocator = agent_seer::Allocator;

fn main() -> std::process::ExitCode {
    cli::main()
}
