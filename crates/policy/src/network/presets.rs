//! Built-in allow-lists a user can name instead of listing domains.

/// A named list of patterns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Preset {
    /// The name `--allow-preset` takes.
    pub name: &'static str,
    /// One line for `--help` and the docs.
    pub description: &'static str,
    /// The domain patterns it allows.
    pub domains: &'static [&'static str],
}

const PRESETS: &[Preset] = &[
    Preset {
        name: "model-apis",
        description: "the model APIs of common coding agents (Claude Code, Codex, Gemini CLI, \
                      Mistral, OpenRouter)",
        domains: &[
            "api.anthropic.com",
            "statsig.anthropic.com",
            "api.openai.com",
            "generativelanguage.googleapis.com",
            "api.mistral.ai",
            "openrouter.ai",
        ],
    },
    Preset {
        name: "github",
        description: "GitHub, including git over HTTPS, the API, release and raw downloads",
        domains: &[
            "github.com",
            "*.github.com",
            "*.githubusercontent.com",
            "codeload.github.com",
            "ghcr.io",
        ],
    },
    Preset {
        name: "rust",
        description: "crates.io (sparse index, API and crate downloads)",
        domains: &["crates.io", "static.crates.io", "index.crates.io"],
    },
    Preset {
        name: "python",
        description: "PyPI (index and package files)",
        domains: &["pypi.org", "files.pythonhosted.org"],
    },
    Preset {
        name: "javascript",
        description: "the npm registry",
        domains: &["registry.npmjs.org"],
    },
    Preset {
        name: "go",
        description: "the Go module proxy and checksum database",
        domains: &["proxy.golang.org", "sum.golang.org"],
    },
];

/// Every preset, in the order `jaula check` lists them.
pub fn presets() -> &'static [Preset] {
    PRESETS
}

/// The preset called `name`.
pub fn preset(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name)
}

/// A config file names a preset; an unknown name is refused at load with its key and line.
impl<'de> serde::Deserialize<'de> for Preset {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Preset, D::Error> {
        let name = String::deserialize(d)?;
        preset(&name).copied().ok_or_else(|| {
            let known: Vec<&str> = presets().iter().map(|p| p.name).collect();
            serde::de::Error::custom(format!(
                "unknown preset {name:?} (known: {})",
                known.join(", ")
            ))
        })
    }
}
