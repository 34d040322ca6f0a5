/**
 * The console's only style sheet, served at /admin/assets/admin.css (the CSP allows no inline
 * style). Colours meet WCAG AA: body text #1a1a1a, muted #4d4d4d, links and buttons #0b57d0
 * and danger #b3261e on white, white on both (all above 4.5:1); focus is a 3px outline.
 */
export const ADMIN_CSS = `
*, *::before, *::after { box-sizing: border-box; }
body { margin: 0; font-family: system-ui, sans-serif; line-height: 1.5; color: #1a1a1a; background: #fff; }
a { color: #0b57d0; }
:focus-visible { outline: 3px solid #0b57d0; outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: 0; background: #fff; padding: .5rem; }
.skip:focus { left: .5rem; }
header { background: #14213d; color: #fff; padding: .5rem 1rem; display: flex; flex-wrap: wrap; gap: .5rem 1.5rem; align-items: center; }
header a { color: #fff; }
header .brand { font-weight: 700; margin-right: auto; }
header nav ul { list-style: none; margin: 0; padding: 0; display: flex; flex-wrap: wrap; gap: .25rem 1rem; }
header nav a[aria-current="page"] { font-weight: 700; text-decoration-thickness: 3px; }
header :focus-visible { outline-color: #fff; }
header button { background: transparent; color: #fff; border: 1px solid #fff; }
main { max-width: 72rem; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.5rem; margin: .5rem 0 1rem; }
h2 { font-size: 1.15rem; margin-top: 1.5rem; }
.muted { color: #4d4d4d; }
.notice { border-left: 4px solid #146c2e; background: #eef7ee; padding: .5rem .75rem; }
.problem { border-left: 4px solid #b3261e; background: #fdeeee; padding: .5rem .75rem; }
form.inline { display: inline; }
form.row { display: flex; flex-wrap: wrap; gap: .5rem; align-items: flex-end; margin: .5rem 0 1rem; }
label { display: block; font-weight: 600; }
input, select { font: inherit; padding: .4rem .5rem; border: 1px solid #6b6b6b; border-radius: 4px; min-height: 2.5rem; }
button, .button { font: inherit; padding: .4rem .8rem; border: 1px solid #0b57d0; border-radius: 4px; background: #0b57d0; color: #fff; cursor: pointer; min-height: 2.5rem; text-decoration: none; display: inline-block; }
button.secondary { background: #fff; color: #0b57d0; }
button.danger, .button.danger { background: #b3261e; border-color: #b3261e; color: #fff; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; font-size: .95rem; }
th, td { text-align: left; padding: .4rem .5rem; border-bottom: 1px solid #d0d0d0; vertical-align: top; }
th { background: #f3f4f6; }
td.actions form { margin: 0 .25rem .25rem 0; }
td.actions button { padding: .2rem .5rem; min-height: 2.25rem; font-size: .9rem; }
.pager { display: flex; gap: 1rem; align-items: center; margin: 1rem 0; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; }
dl.facts dt { font-weight: 600; }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
pre { background: #f3f4f6; padding: .75rem; overflow-x: auto; }
.chart { min-height: 320px; margin: 1rem 0; }
.login { max-width: 24rem; margin: 3rem auto; }
.login input { width: 100%; }
@media (max-width: 40rem) {
  table.stack thead { position: absolute; left: -9999px; }
  table.stack tr { display: block; border-bottom: 2px solid #d0d0d0; padding: .5rem 0; }
  table.stack td { display: grid; grid-template-columns: 8rem 1fr; border: 0; padding: .15rem .25rem; }
  table.stack td::before { content: attr(data-label); font-weight: 600; }
  table.stack td.actions { display: block; }
  table.stack td.actions::before { display: block; margin-bottom: .25rem; }
  dl.facts { grid-template-columns: 1fr; }
}
`;
