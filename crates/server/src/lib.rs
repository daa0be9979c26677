//! `podcode serve`: the HTTP + SSE API over the engine, and the web page (`assets`).

pub mod assets;
