package esqlog.terms;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import org.apache.lucene.index.NumericDocValues;
import org.apache.lucene.index.PostingsEnum;
import org.apache.lucene.index.TermState;
import org.apache.lucene.index.TermsEnum;
import org.apache.lucene.util.BytesRef;

/**
 * A group's rare terms in one segment, as one term: the state a group's rare-terms key (one
 * more term of its synonym query, {@link #key}) has in the rare view of the segments
 * ({@link CachedTermsView}), where the rare terms themselves answer as absent.
 *
 * <p>Why: an identifiers query names ~300 terms, ~290 of them compounds found in a handful of
 * documents each (about 1,100 postings in all against ~65,000 for its dozen common words, on
 * 153K Go functions). Scored one by one, each costs a terms enum, a postings enum with its
 * buffers, a place in its group's disjunction, and a look at its impacts on every block the
 * group scores: together they were the whole of the query's cost over the plain match (the same
 * query without them took as long as the match). Read at once into one sorted list of (doc,
 * summed tf), they cost one small array per group and segment and one sub-iterator. A term
 * under {@link #MAX_DF} documents holds a single postings block, with no skip data and no
 * impacts of its own (Lucene gives it the largest possible impact); the list, being in
 * memory, reports exact ones ({@link RareImpacts}), so the group's blocks can be skipped; the
 * summed tf per document is the same sum SynonymQuery makes, so the scores are the same.
 */
final class RareTerms extends TermState {
    /** Below this many documents in a segment a term is rare: Lucene's postings block size. */
    static final int MAX_DF = 128;
    /** First byte of a rare-terms key: no UTF-8 term holds it, so it is no real term. */
    private static final byte MARK = (byte) 0xFF;

    private BytesRef[] terms;
    private TermState[] states;
    private int docFreq;
    private long totalTermFreq;

    private RareTerms(BytesRef[] terms, TermState[] states, int docFreq, long totalTermFreq) {
        this.terms = terms;
        this.states = states;
        this.docFreq = docFreq;
        this.totalTermFreq = totalTermFreq;
    }

    /** The key that stands for {@code group}'s rare terms: 0xFF, then each term and 0xFF. */
    static BytesRef key(List<BytesRef> group) {
        int length = 1;
        for (BytesRef term : group) {
            length += term.length + 1;
        }
        byte[] bytes = new byte[length];
        bytes[0] = MARK;
        int at = 1;
        for (BytesRef term : group) {
            System.arraycopy(term.bytes, term.offset, bytes, at, term.length);
            at += term.length;
            bytes[at++] = MARK;
        }
        return new BytesRef(bytes);
    }

    static boolean isKey(BytesRef text) {
        return text.length > 0 && text.bytes[text.offset] == MARK;
    }

    /**
     * The key's terms that {@code segment} holds in fewer than {@link #MAX_DF} documents, found
     * through its (cached) seeks; null if it holds none.
     */
    static RareTerms find(BytesRef key, CachedTermsView.CachingTermsEnum segment)
            throws IOException {
        List<BytesRef> found = new ArrayList<>();
        List<TermState> states = new ArrayList<>();
        long docFreq = 0;
        long totalTermFreq = 0;
        int start = key.offset + 1;
        int end = key.offset + key.length;
        for (int i = start; i < end; i++) {
            if (key.bytes[i] != MARK) {
                continue;
            }
            BytesRef term = new BytesRef(key.bytes, start, i - start);
            start = i + 1;
            if (segment.seek(term) && segment.docFreq() < MAX_DF) {
                found.add(BytesRef.deepCopyOf(term));
                states.add(segment.termState());
                docFreq += segment.docFreq();
                totalTermFreq += segment.totalTermFreq();
            }
        }
        if (found.isEmpty()) {
            return null;
        }
        // a document may hold several of them: the union is no larger than the sum (nor than
        // Integer.MAX_VALUE, which the sum of fewer than 128 per term over clause-bounded
        // terms never nears)
        return new RareTerms(found.toArray(new BytesRef[0]), states.toArray(new TermState[0]),
            (int) Math.min(docFreq, Integer.MAX_VALUE), totalTermFreq);
    }

    int docFreq() {
        return docFreq;
    }

    long totalTermFreq() {
        return totalTermFreq;
    }

    /**
     * Their postings, read through the segment's own enum ({@code segment}, repositioned by
     * each term's state) into one list in doc order with the tf summed per document; with
     * {@code norms} (the segment's norms of the field, null if it keeps none) and {@code
     * impacts}, also the list's exact impacts ({@link RareImpacts}) in a segment of {@code
     * maxDoc} documents.
     */
    RareList postings(TermsEnum segment, int flags, NumericDocValues norms, boolean impacts,
                      int maxDoc) throws IOException {
        if (PostingsEnum.featureRequested(flags, PostingsEnum.POSITIONS)) {
            throw new UnsupportedOperationException("esqlog_terms reads no positions");
        }
        MergedPostings merged = new MergedPostings((int) Math.min(totalTermFreq, docFreq));
        PostingsEnum reuse = null;
        for (int i = 0; i < terms.length; i++) {
            segment.seekExact(terms[i], states[i]);
            reuse = segment.postings(reuse, PostingsEnum.FREQS);
            merged.add(reuse);
        }
        merged.merge();
        return new RareList(merged.docs, merged.freqs, merged.size, norms, impacts, maxDoc);
    }

    @Override
    public void copyFrom(TermState other) {
        RareTerms that = (RareTerms) other;
        terms = that.terms;
        states = that.states;
        docFreq = that.docFreq;
        totalTermFreq = that.totalTermFreq;
    }

    @Override
    public String toString() {
        return "RareTerms(" + terms.length + " terms, docFreq=" + docFreq + ")";
    }
}
