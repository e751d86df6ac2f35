//! The map file: TOML, `[[switch]]` (name, level, group), `[[host]]`
//! (name, switch, port) and `[[cable]]` (a, b: `SWITCH` or
//! `SWITCH:PORT`), each field checked as it is read (an unknown key is a
//! syntax error naming its line). Reads the parts only; the map is
//! checked whole by `Fabric::build`. Opens no file.

use crate::map::{Fabric, Host, MapError, Switch};
use crate::parts::Parts;
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileCable {
    a: String,
    b: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    switch: Vec<Switch>,
    #[serde(default)]
    host: Vec<Host>,
    #[serde(default)]
    cable: Vec<FileCable>,
}

/// The parts of the map file in `text` (TOML), each read but the whole
/// not yet checked.
pub(crate) fn parts_of_toml(origin: &str, text: &str) -> Result<Parts, MapError> {
    let file: File = toml::from_str(text).map_err(|e| {
        // the line the error starts on: the newlines before it, plus one
        let newlines = |end: usize| {
            text.as_bytes()[..end.min(text.len())]
                .iter()
                .filter(|&&b| b == b'\n')
                .count()
        };
        let line = e.span().map_or(1, |s| newlines(s.start) + 1);
        MapError::Syntax {
            origin: origin.to_string(),
            line,
            message: e.message().trim().to_string(),
        }
    })?;
    let ends = file.cable.into_iter().map(|c| (c.a, c.b)).collect::<Vec<_>>();
    Ok(Parts {
        switches: file.switch,
        hosts: file.host,
        ends,
        routes: Default::default(),
    })
}

impl Fabric {
    /// The map in `text` (TOML), checked; `origin` names it in errors.
    pub fn parse(origin: &str, text: &str) -> Result<Fabric, MapError> {
        let p = parts_of_toml(origin, text)?;
        Fabric::build(origin, p.switches, p.hosts, &p.ends)
    }
}
