//! The project's own agent suites (`harnesses/`, `transcripts/`), run as `cargo test` trials:
//! `cargo test --test agents -- veo::`.

fn main() -> std::process::ExitCode {
    agent_seer::harness::main()
}
