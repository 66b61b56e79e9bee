//! The project's own agent suites (`harnesses/`, `transcripts/`), run as `cargo test` trials:
//! `cargo test --test agents -- veo::`.

#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOC: agent_seer::Allocator = agent_seer::Allocator;

fn main() -> std::process::ExitCode {
    agent_seer::harness::main()
}
