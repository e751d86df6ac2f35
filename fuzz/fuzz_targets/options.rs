//! The command line (fabdiag-options), argv as bytes: the first byte picks
//! the command (each pair tool, sweep, serve, health, host-traffic), the
//! rest split at NULs into its arguments. No argument list panics a
//! parser; each is taken or refused with a message.
#![no_main]
use fabdiag_model::Tool;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let args: Vec<String> = rest
        .split(|&b| b == 0)
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let tools: Vec<Tool> = Tool::all().collect();
    let commands = tools.len() + 4;
    match pick as usize % commands {
        i if i < tools.len() => {
            let _ = fabdiag_options::parse(tools[i], &args);
            let _ = fabdiag_options::parse_for_rank(tools[i], &args, 3);
        }
        i if i == tools.len() => {
            if let Ok(fabdiag_options::Action::Run(o)) = fabdiag_options::sweep::sweep(&args) {
                let _ = o.given_rules();
            }
        }
        i if i == tools.len() + 1 => {
            let _ = fabdiag_options::serve::serve(&args);
        }
        i if i == tools.len() + 2 => {
            let _ = fabdiag_options::health::parse(&args);
        }
        _ => {
            let _ = fabdiag_options::host_traffic::parse(&args);
        }
    }
});
