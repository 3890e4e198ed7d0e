//! The teacher's walk-through routes, as `teacher.md` declares them: which
//! listings to show, in which order, for how many minutes each.

use super::ROUTE_OPENING;

/// A walk-through's route: the listings in order, the minutes at each and
/// what to point at there (a stop to run or ask is a row without
/// listings).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    pub chapter: String,
    pub stops: Vec<Stop>,
}

/// One row of a route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stop {
    pub minutes: usize,
    /// `file:anchor` or `file` (whole), as the chapter includes them.
    pub listings: Vec<String>,
    pub point_at: String,
}

impl Route {
    pub fn minutes(&self) -> usize {
        self.stops.iter().map(|stop| stop.minutes).sum()
    }
}

/// Every route a page declares: a `ROUTE_OPENING` line naming the
/// chapter, then a table `| min | listings | what to point at |` whose
/// listings are in backticks.
pub fn routes(page: &str) -> Result<Vec<Route>, String> {
    let mut routes = Vec::new();
    let mut lines = page.lines();
    while let Some(line) = lines.next() {
        let Some(rest) = line.trim().strip_prefix(ROUTE_OPENING) else {
            continue;
        };
        let chapter = rest.trim_end_matches("-->").trim().to_owned();
        let mut stops = Vec::new();
        for row in lines
            .by_ref()
            .skip_while(|l| !l.starts_with('|'))
            .take_while(|l| l.starts_with('|'))
            .skip(2)
        {
            let cells: Vec<&str> = row.trim().trim_matches('|').split('|').collect();
            let [minutes, listings, point_at] = cells[..] else {
                return Err(format!(
                    "route of {chapter}: `{row}` is not three cells"
                ));
            };
            stops.push(Stop {
                minutes: minutes.trim().parse().map_err(|_| {
                    format!("route of {chapter}: `{minutes}` is not minutes")
                })?,
                listings: listings
                    .split('`')
                    .skip(1)
                    .step_by(2)
                    .map(str::to_owned)
                    .collect(),
                point_at: point_at.trim().to_owned(),
            });
        }
        routes.push(Route { chapter, stops });
    }
    Ok(routes)
}
