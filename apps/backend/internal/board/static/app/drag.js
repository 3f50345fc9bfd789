// Pointer-driven drag and drop of cards between columns (mouse and pen;
// on touch screens the page scrolls and the Move button moves a card).

const THRESHOLD = 6;

// enableDrag lets cards inside root be dragged into any ".cards" list.
// drop(card, list, index, undo) is called once a card lands; undo() puts
// it back where it was.
export function enableDrag(root, drop) {
  let st = null;
  root.addEventListener('dragstart', (ev) => ev.preventDefault());
  root.addEventListener('pointerdown', (ev) => {
    const card = ev.target.closest('.card');
    if (!card || ev.button !== 0 || ev.pointerType === 'touch' || ev.target.closest('button')) return;
    st = { card, x: ev.clientX, y: ev.clientY, id: ev.pointerId, dragging: false };
  });
  root.addEventListener('pointermove', (ev) => {
    if (!st || ev.pointerId !== st.id) return;
    if (!st.dragging) {
      if (Math.hypot(ev.clientX - st.x, ev.clientY - st.y) < THRESHOLD) return;
      begin(st, ev);
    }
    follow(st, ev);
  });
  const end = (ev, cancel) => {
    if (!st || (ev && ev.pointerId !== st.id)) return;
    const s = st;
    st = null;
    if (!s.dragging) return;
    finish(s, cancel, drop);
  };
  root.addEventListener('pointerup', (ev) => end(ev, false));
  root.addEventListener('pointercancel', (ev) => end(ev, true));
  document.addEventListener('keydown', (ev) => { if (ev.key === 'Escape' && st) end(null, true); });
}

function begin(st, ev) {
  const { card } = st;
  const r = card.getBoundingClientRect();
  st.dragging = true;
  st.dx = ev.clientX - r.left;
  st.dy = ev.clientY - r.top;
  st.origin = { list: card.parentElement, next: card.nextElementSibling };
  st.placeholder = card.cloneNode(false);
  st.placeholder.className = 'card placeholder';
  st.placeholder.style.height = `${r.height}px`;
  st.placeholder.removeAttribute('tabindex');
  card.after(st.placeholder);
  card.classList.add('dragging');
  Object.assign(card.style, { position: 'fixed', width: `${r.width}px`, left: `${r.left}px`, top: `${r.top}px` });
  try { card.setPointerCapture(ev.pointerId); } catch { /* pointer already released */ }
  // The click that ends a drag must not open the task.
  card.addEventListener('click', (e) => { e.preventDefault(); e.stopPropagation(); }, { capture: true, once: true });
}

function follow(st, ev) {
  const { card, placeholder } = st;
  card.style.left = `${ev.clientX - st.dx}px`;
  card.style.top = `${ev.clientY - st.dy}px`;
  const under = document.elementFromPoint(ev.clientX, ev.clientY);
  const column = under && under.closest('.column');
  for (const c of document.querySelectorAll('.column.drop')) if (c !== column) c.classList.remove('drop');
  if (!column) return;
  column.classList.add('drop');
  const list = column.querySelector('.cards');
  const before = [...list.children].find((c) => c !== card && c !== placeholder
    && ev.clientY < c.getBoundingClientRect().top + c.getBoundingClientRect().height / 2);
  if (before) list.insertBefore(placeholder, before);
  else list.append(placeholder);
}

function finish(st, cancel, drop) {
  const { card, placeholder, origin } = st;
  card.classList.remove('dragging');
  card.style.position = card.style.width = card.style.left = card.style.top = '';
  for (const c of document.querySelectorAll('.column.drop')) c.classList.remove('drop');
  const list = placeholder.parentElement;
  const undo = () => origin.list.insertBefore(card, origin.next && origin.next.parentElement === origin.list ? origin.next : null);
  if (cancel || !list) { placeholder.remove(); undo(); return; }
  list.insertBefore(card, placeholder);
  placeholder.remove();
  const index = [...list.children].indexOf(card);
  const moved = list !== origin.list || card.nextElementSibling !== origin.next;
  if (moved) drop(card, list, index, undo);
  card.focus();
}
