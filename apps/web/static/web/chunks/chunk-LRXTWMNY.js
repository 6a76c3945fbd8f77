import{a as c,l as i}from"./chunk-DQQSSU7N.js";var l=/^\s*(?:[-*•]|\d+[.)])\s+/;function p(n){let t=[];for(let r of n.replace(/\r\n?/g,`
`).split(/\n\s*\n/)){let o=r.split(`
`).filter(e=>e.trim()!=="");if(o.length!==0)if(o.every((e,s)=>l.test(e)||s>0&&/^\s+\S/.test(e))){let e=[];for(let s of o)l.test(s)?e.push(s.replace(l,"").trim()):e[e.length-1]+=` ${s.trim()}`;t.push({kind:"list",items:e})}else t.push({kind:"paragraph",text:o.map(e=>e.trim()).join(" ")})}return t}function a(n){let t=[],r=/`([^`]+)`|\*\*([^*]+)\*\*/g,o=0;for(let e=r.exec(n);e!==null;e=r.exec(n))e.index>o&&t.push({text:n.slice(o,e.index)}),e[1]!==void 0?t.push({text:e[1],code:!0}):t.push({text:e[2]??"",strong:!0}),o=e.index+e[0].length;return o<n.length&&t.push({text:n.slice(o)}),t}function u(n){if(typeof DOMParser>"u")return n.replace(/<[^>]*>/g,"");let t=new DOMParser().parseFromString(n,"text/html");return t.querySelectorAll("br").forEach(r=>r.replaceWith(`
`)),t.querySelectorAll("p, div, ul, ol, h1, h2, h3, h4, h5, h6, pre, blockquote").forEach(r=>{r.append(`

`)}),t.querySelectorAll("li").forEach(r=>{r.prepend(`
- `)}),(t.body.textContent??"").replace(/\n{3,}/g,`

`).trim()}function h({text:n}){return a(n).map((t,r)=>t.code?i("code",{children:t.text},r):t.strong?i("strong",{children:t.text},r):t.text)}function d({text:n,format:t="text"}){let r=t==="html"?u(n):n;return i(c,{children:p(r).map((o,e)=>o.kind==="list"?i("ul",{children:o.items.map((s,f)=>i("li",{children:i(h,{text:s})},f))},e):i("p",{children:i(h,{text:o.text})},e))})}export{d as a};
