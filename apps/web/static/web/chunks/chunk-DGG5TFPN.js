var o=/^\s*(?:[-*•]|\d+[.)])\s+/;function l(n){let t=[];for(let r of n.replace(/\r\n?/g,`
`).split(/\n\s*\n/)){let s=r.split(`
`).filter(e=>e.trim()!=="");if(s.length!==0)if(s.every((e,i)=>o.test(e)||i>0&&/^\s+\S/.test(e))){let e=[];for(let i of s)o.test(i)?e.push(i.replace(o,"").trim()):e[e.length-1]+=` ${i.trim()}`;t.push({kind:"list",items:e})}else t.push({kind:"paragraph",text:s.map(e=>e.trim()).join(" ")})}return t}function c(n){let t=[],r=/`([^`]+)`|\*\*([^*]+)\*\*/g,s=0;for(let e=r.exec(n);e!==null;e=r.exec(n))e.index>s&&t.push({text:n.slice(s,e.index)}),e[1]!==void 0?t.push({text:e[1],code:!0}):t.push({text:e[2]??"",strong:!0}),s=e.index+e[0].length;return s<n.length&&t.push({text:n.slice(s)}),t}function p(n){if(typeof DOMParser>"u")return n.replace(/<[^>]*>/g,"");let t=new DOMParser().parseFromString(n,"text/html");return t.querySelectorAll("br").forEach(r=>r.replaceWith(`
`)),t.querySelectorAll("p, div, ul, ol, h1, h2, h3, h4, h5, h6, pre, blockquote").forEach(r=>{r.append(`

`)}),t.querySelectorAll("li").forEach(r=>{r.prepend(`
- `)}),(t.body.textContent??"").replace(/\n{3,}/g,`

`).trim()}export{l as a,c as b,p as c};
